/**
 * The two generations of the platform's merchant record (contract section 20):
 * a write in v1's shape (`tax`, `representative_id`) or v2's
 * (`tax_identification`, `identification`) becomes one stored merchant, and
 * every answer carries both, read from the same columns so they never differ.
 */
import { isDeepStrictEqual } from 'node:util';
import type { MerchantRepresentative, MerchantSettlementCondition } from '../../db/schema.js';
import { BadRequestError, type FieldError, ValidationError } from '../../errors.js';
import { checkBankAccount } from './bank-account.js';
import { countryLengthErrors } from './country-lengths.js';
import type { MerchantListRow, MerchantRow } from './merchants-dal.js';
import type { MerchantResource } from './merchant-answer-schemas.js';
import type { Country, CreateMerchantRequest, UpdateMerchantRequest } from './merchants-schemas.js';
import { checkTaxIdentification, type TaxIdentification } from './tax-identification.js';

/** An instant as the API answers it; the listing's rows come with theirs already printed. */
function instant(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

export function merchantResource(m: MerchantRow | MerchantListRow): MerchantResource {
  const taxIdentification =
    m.taxIdentificationType === null || m.taxIdentificationNumber === null
      ? null
      : { type: m.taxIdentificationType as TaxIdentification['type'], number: m.taxIdentificationNumber };
  return {
    id: m.id,
    customer_id: m.customerId,
    name: m.name,
    business_name: m.businessName,
    fantasy_name: m.fantasyName,
    legal_type: m.legalType,
    country: m.country as Country | null,
    merchant_code: m.merchantCode,
    email: m.email,
    status: m.status,
    address: m.address,
    tax_identification: taxIdentification,
    tax: taxIdentification && { id: taxIdentification.number, type: m.financialInfo?.tax_condition ?? null },
    representative: m.representative && {
      ...m.representative,
      representative_id: m.representative.identification,
      birth_date: m.representative.birth_date ?? null,
    },
    additional_info: m.additionalInfo,
    phone: m.phone,
    activity: m.activity,
    category: m.category,
    settlement_condition: m.settlementCondition,
    financial_info: m.financialInfo,
    create_date: instant(m.createdAt),
    update_date: instant(m.updatedAt),
  };
}

/** The identifier in its compact form, or a 400 `invalid_tax_identification` naming `field`. */
export function checkedTaxIdentification(
  country: Country | null,
  tax: TaxIdentification,
  field = 'tax_identification.number',
): TaxIdentification {
  const checked = country
    ? checkTaxIdentification(country, tax)
    : { refusal: "needs the merchant's country, which this merchant has not got: the operator's import sets both" };
  if ('ok' in checked) return checked.ok;
  throw new BadRequestError('invalid_tax_identification', undefined, [{ field, message: checked.refusal }]);
}

/** v1's tax names no kind of identifier: it is the country's. */
const TAX_TYPE_OF: Record<Country, TaxIdentification['type']> = { ARG: 'CUIT', MEX: 'RFC' };

/** Two fields that name one fact and were sent with different values. */
function disagree(first: string, second: string): FieldError[] {
  return [
    { field: first, message: `must agree with ${second}: they are the same fact` },
    { field: second, message: `must agree with ${first}: they are the same fact` },
  ];
}

type WriteBody = CreateMerchantRequest | UpdateMerchantRequest;

/** The stored values of the platform's fields a write sent; undefined: not sent, null: cleared. */
export interface PlatformColumns {
  tax?: TaxIdentification;
  financialInfo?: Record<string, string> | null;
  representative?: MerchantRepresentative | null;
  settlementCondition?: MerchantSettlementCondition | null;
}

function readTax(country: Country | null, body: WriteBody, errors: FieldError[]): TaxIdentification | undefined {
  const v2 = body.tax_identification && checkedTaxIdentification(country, body.tax_identification);
  const v1 =
    body.tax &&
    checkedTaxIdentification(country, { type: country ? TAX_TYPE_OF[country] : 'CUIT', number: body.tax.id }, 'tax.id');
  if (v1 && v2 && v1.number !== v2.number) errors.push(...disagree('tax_identification.number', 'tax.id'));
  return v2 ?? v1;
}

/** financial_info, with v1's tax.type as its tax_condition (a PATCH sending tax.type alone keeps the rest). */
function readFinancialInfo(body: WriteBody, current: Record<string, string> | null, errors: FieldError[]) {
  const condition = body.tax?.type;
  const info = body.financial_info;
  if (condition === undefined) return info;
  if (info?.tax_condition !== undefined && info.tax_condition !== condition)
    errors.push(...disagree('tax.type', 'financial_info.tax_condition'));
  return { ...(info === undefined ? current : info), tax_condition: condition };
}

function readRepresentative(body: WriteBody, errors: FieldError[]): MerchantRepresentative | null | undefined {
  if (!body.representative) return body.representative;
  const { identification, representative_id, birth_date, ...person } = body.representative;
  const document = identification ?? representative_id;
  if (!document) {
    errors.push({ field: 'representative.identification', message: "is required (or v1's representative_id)" });
    return undefined;
  }
  if (identification && representative_id && !isDeepStrictEqual(identification, representative_id))
    errors.push(...disagree('representative.identification', 'representative.representative_id'));
  return { ...person, identification: document, ...(birth_date === undefined ? {} : { birth_date }) };
}

function readSettlement(body: WriteBody, errors: FieldError[]): MerchantSettlementCondition | null | undefined {
  const settlement = body.settlement_condition;
  if (!settlement) return settlement;
  const account = checkBankAccount(settlement.cbu_or_cvu);
  if ('refusal' in account) {
    errors.push({ field: 'settlement_condition.cbu_or_cvu', message: account.refusal });
    return undefined;
  }
  return { ...settlement, cbu_or_cvu: account.ok };
}

/**
 * The platform's fields of a write as they are stored, checked: the
 * country's lengths, identifiers and check digits, and that v1 and v2 agree
 * where both name one fact. Any refusal is a 400 naming each field.
 */
export function readPlatformFields(
  country: Country | null,
  body: WriteBody,
  current: { financialInfo: Record<string, string> | null } | null,
): PlatformColumns {
  const errors: FieldError[] = countryLengthErrors(country, body);
  const tax = readTax(country, body, errors);
  const columns: PlatformColumns = {
    financialInfo: readFinancialInfo(body, current?.financialInfo ?? null, errors),
    representative: readRepresentative(body, errors),
    settlementCondition: readSettlement(body, errors),
  };
  if (errors.length > 0) throw new ValidationError(errors);
  if (tax) columns.tax = tax;
  return columns;
}
