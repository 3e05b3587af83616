/**
 * Merchants (docs/api.md#merchants): the listing and one merchant, onboarding
 * and changes by customer callers, deactivation (its keys refused on every
 * instance, no new plans), and the one rule every merchant-scoped read shares:
 * whose merchant may be named.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Notice, UnitOfWork, WriteScope } from '../../db/unit-of-work.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import type { CustomerLocks } from '../../db/customer-locks.js';
import type { MerchantChanges, MerchantListRow, MerchantRow, MerchantScope, MerchantsDal } from './merchants-dal.js';
import type {
  Country,
  CreateMerchantRequest,
  MerchantResource,
  MerchantStatus,
  UpdateMerchantRequest,
} from './merchants-schemas.js';
import { checkTaxIdentification, type TaxIdentification } from './tax-identification.js';

export type { MerchantResource };

/** The DALs a change of merchants writes through (the customer's assignment lock takes its own). */
export interface MerchantsDals {
  merchants: MerchantsDal;
}

/**
 * How the API keys' caches learn that keys changed, given by the composition
 * root: a merchant's status decides whether its keys work, and merchants know
 * nothing else of keys.
 */
export interface KeyCacheInvalidation {
  /** The notice that makes every instance forget these keys of the customer. */
  noticeFor(customerId: string, keyHashes: readonly string[]): Notice;
  /** This instance forgets one at once, before the answer. */
  changed(customerId: string, keyHash: string): void;
}

/** Fields a PATCH never takes: who the merchant is and whose, its country (its tax identifier depends on it), and what the service sets. */
const UNCHANGEABLE = {
  id: 'cannot be changed',
  customer_id: 'cannot be changed: a merchant never moves to another customer',
  country: 'cannot be changed: the tax identifier and address depend on it',
  name: 'cannot be set: it is fantasy_name, else business_name',
  create_date: 'cannot be changed',
  update_date: 'cannot be changed',
} as const;

function scopeOf(principal: Principal): MerchantScope {
  return { customerId: principal.customerId, merchantId: principal.merchantId };
}

/** An instant as the API answers it; the listing's rows come with theirs already printed. */
function instant(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

export function merchantResource(m: MerchantRow | MerchantListRow): MerchantResource {
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
    tax_identification:
      m.taxIdentificationType === null || m.taxIdentificationNumber === null
        ? null
        : { type: m.taxIdentificationType as TaxIdentification['type'], number: m.taxIdentificationNumber },
    representative: m.representative,
    additional_info: m.additionalInfo,
    create_date: instant(m.createdAt),
    update_date: instant(m.updatedAt),
  };
}

/** The identifier in its compact form, or a 400 naming `tax_identification.number`. */
export function checkedTaxIdentification(country: Country | null, tax: TaxIdentification): TaxIdentification {
  const checked = country
    ? checkTaxIdentification(country, tax)
    : { refusal: "needs the merchant's country, which this merchant has not got: the operator's import sets both" };
  if ('ok' in checked) return checked.ok;
  throw new BadRequestError('invalid_tax_identification', undefined, [
    { field: 'tax_identification.number', message: checked.refusal },
  ]);
}

function merchantNotFound(): NotFoundError {
  return new NotFoundError('merchant_not_found');
}

/** Merchants are the customer's to manage: a merchant caller only reads itself. */
function assertMayChange(principal: Principal): void {
  if (isMerchantCaller(principal))
    throw new ForbiddenError(
      'forbidden',
      'Merchant callers may not create or change merchants; a customer caller does.',
    );
}

export function createMerchantsService(deps: {
  uow: UnitOfWork<MerchantsDals>;
  merchantsDal: Pick<MerchantsDal, 'list' | 'find' | 'belongsToCustomer'>;
  keyCaches: KeyCacheInvalidation;
  customerLocks: CustomerLocks<MerchantsDals>;
}) {
  const { uow, merchantsDal, keyCaches, customerLocks } = deps;

  /** Every instance forgets the merchant's verified keys, so its new status applies to the next request. */
  async function pushKeyChanges(scope: WriteScope<MerchantsDals>, customerId: string, merchantId: string) {
    const hashes = await scope.dal.merchants.enabledKeyHashes(merchantId);
    if (hashes.length === 0) return;
    await scope.notify(keyCaches.noticeFor(customerId, hashes));
    scope.afterCommit(() => {
      for (const hash of hashes) keyCaches.changed(customerId, hash);
    });
  }

  return {
    async list(
      principal: Principal,
      query: PageRequest & { q?: string | undefined; status?: string | undefined },
    ): Promise<Page<MerchantResource>> {
      const { rows, total } = await merchantsDal.list(scopeOf(principal), {
        page: query.page,
        size: query.size,
        search: query.q,
        status: query.status?.toUpperCase() as MerchantStatus | undefined,
      });
      return toPage(rows.map(merchantResource), total, query);
    },

    async get(principal: Principal, id: string): Promise<MerchantResource> {
      const row = await merchantsDal.find(scopeOf(principal), id);
      if (!row) throw merchantNotFound();
      return merchantResource(row);
    },

    assertMayChange,

    /** A PATCH naming a field it can never change is told so by name, before the schema's generic refusal. */
    assertChangeableFields(body: unknown): void {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return; // the schema refuses it
      const named = Object.keys(UNCHANGEABLE).filter((field) => field in body) as Array<keyof typeof UNCHANGEABLE>;
      if (named.length > 0) throw new ValidationError(named.map((field) => ({ field, message: UNCHANGEABLE[field] })));
    },

    async create(principal: Principal, body: CreateMerchantRequest, context: ChangeContext): Promise<MerchantResource> {
      assertMayChange(principal);
      if (body.customer_id !== principal.customerId) throw new NotFoundError('customer_not_found');
      const tax = checkedTaxIdentification(body.country, body.tax_identification);
      return uow.write(context, async ({ dal, audit, emit }) => {
        const row = await dal.merchants.insert({
          customerId: principal.customerId,
          name: body.fantasy_name,
          businessName: body.business_name,
          fantasyName: body.fantasy_name,
          legalType: body.legal_type,
          country: body.country,
          merchantCode: body.merchant_code ?? null,
          email: body.email ?? null,
          address: body.address,
          taxIdentificationType: tax.type,
          taxIdentificationNumber: tax.number,
          representative: body.representative ?? null,
          additionalInfo: body.additional_info ?? null,
        });
        if (!row) throw new ConflictError('merchant_code_conflict');
        const merchant = merchantResource(row);
        await audit({
          action: 'merchant.created',
          customerId: row.customerId,
          targetType: 'merchant',
          targetId: row.id,
          details: { country: row.country, merchant_code: row.merchantCode },
        });
        await emit({ type: 'MERCHANT_CREATED', customerId: row.customerId, data: merchant });
        return merchant;
      });
    },

    /**
     * PATCH: the fields sent, the others kept. A change of status takes the
     * customer's assignment lock, so it never interleaves with a running
     * assignment (an INACTIVE merchant gets no plans from one that started
     * before), and pushes the change to the merchant's keys on every instance.
     * A PATCH that changes nothing writes nothing.
     */
    async update(
      principal: Principal,
      id: string,
      body: UpdateMerchantRequest,
      context: ChangeContext,
    ): Promise<MerchantResource> {
      assertMayChange(principal);
      const work = async (scope: WriteScope<MerchantsDals>): Promise<MerchantResource> => {
        const current = await scope.dal.merchants.lock(scopeOf(principal), id);
        if (!current) throw merchantNotFound();
        const { changes, fields } = changesOf(current, body);
        if (fields.length === 0) return merchantResource(current);
        const row = await scope.dal.merchants.update(current.id, changes);
        if (!row) throw new ConflictError('merchant_code_conflict');
        if (changes.status) await pushKeyChanges(scope, row.customerId, row.id);
        const merchant = merchantResource(row);
        await scope.audit({
          action: 'merchant.updated',
          customerId: row.customerId,
          targetType: 'merchant',
          targetId: row.id,
          details: { fields, ...(changes.status ? { status: row.status, previous_status: current.status } : {}) },
        });
        await scope.emit({ type: 'MERCHANT_UPDATED', customerId: row.customerId, data: merchant });
        return merchant;
      };
      return body.status === undefined
        ? uow.write(context, work)
        : customerLocks.forCustomer(principal.customerId, context, (scope) => work(scope));
    },

    /**
     * The merchant a request is about. A merchant caller is always about itself
     * (by default, or by naming itself); anything else the caller may not see is
     * a 404 that says nothing about whether it exists.
     */
    async resolveMerchant(principal: Principal, requested: string | undefined): Promise<string | null> {
      const merchantId = requested?.toLowerCase();
      if (principal.merchantId !== null) {
        if (merchantId !== undefined && merchantId !== principal.merchantId) throw merchantNotFound();
        return principal.merchantId;
      }
      if (merchantId === undefined) return null;
      if (!(await merchantsDal.belongsToCustomer(principal.customerId, merchantId))) throw merchantNotFound();
      return merchantId;
    },
  };
}

/** The columns each field of a PATCH sets. */
const COLUMNS_OF: Record<keyof UpdateMerchantRequest, Array<keyof MerchantChanges>> = {
  legal_type: ['legalType'],
  business_name: ['businessName', 'name'],
  fantasy_name: ['fantasyName', 'name'],
  additional_info: ['additionalInfo'],
  email: ['email'],
  merchant_code: ['merchantCode'],
  status: ['status'],
  address: ['address'],
  tax_identification: ['taxIdentificationType', 'taxIdentificationNumber'],
  representative: ['representative'],
};

/**
 * What a PATCH changes: the columns of the fields sent whose value differs from
 * the merchant's (the display name follows the names), and those fields' names.
 */
function changesOf(current: MerchantRow, body: UpdateMerchantRequest) {
  const tax =
    body.tax_identification && checkedTaxIdentification(current.country as Country | null, body.tax_identification);
  const wanted: MerchantChanges = {
    legalType: body.legal_type,
    businessName: body.business_name,
    fantasyName: body.fantasy_name,
    name: body.fantasy_name ?? current.fantasyName ?? body.business_name ?? current.businessName ?? current.name,
    additionalInfo: body.additional_info,
    email: body.email,
    merchantCode: body.merchant_code,
    status: body.status,
    address: body.address,
    taxIdentificationType: tax?.type,
    taxIdentificationNumber: tax?.number,
    representative: body.representative,
  };
  const changes: Record<string, unknown> = {};
  const fields: string[] = [];
  for (const field of Object.keys(body) as Array<keyof UpdateMerchantRequest>) {
    const changed = COLUMNS_OF[field].filter(
      (column) => wanted[column] !== undefined && !isDeepStrictEqual(wanted[column], current[column]),
    );
    for (const column of changed) changes[column] = wanted[column];
    if (changed.length > 0) fields.push(field);
  }
  return { changes: changes as MerchantChanges, fields };
}

export type MerchantsService = ReturnType<typeof createMerchantsService>;
