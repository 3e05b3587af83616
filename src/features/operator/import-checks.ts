/**
 * What an import checks before it writes anything (import-service.ts): the
 * document against the API's own validator, each merchant as the API checks
 * one, and every reference inside the document and against the database;
 * a refusal names its JSON path.
 */
import { BadRequestError, ImportError } from '../../errors.js';
import { COMMISSION_DECIMALS, exactCommission } from '../../lib/commission.js';
import { normaliseEmail } from '../../lib/email.js';
import type { Role } from '../../lib/principal.js';
import { type PlatformColumns, readPlatformFields } from '../merchants/merchant-shapes.js';
import type { ImportDal, MerchantRow, PlanRow, RefusedUser, UserRow } from './import-dal.js';
import type { ImportDocument } from './import-schema.js';

/** The document with ids and e-mails in the case they are stored in; indexes as in the file, for JSON paths. */
export interface Normalised {
  customers: Array<{ id: string; name: string }>;
  merchants: MerchantEntry[];
  users: Array<UserRow & { password: string | undefined; role: Role | undefined }>;
  payment_plans: PlanRow[];
  assignments: Array<{ merchant_id: string; payment_plan_ids: string[] }>;
}

type MerchantEntry = NonNullable<ImportDocument['merchants']>[number];

/**
 * A merchant entry as written: the display name made (fantasy_name, else
 * business_name, else name; a known merchant may have none of them: it keeps
 * its own), and the platform's fields of either generation checked and stored
 * by the API's own rules (merchant-shapes.ts: the country's lengths, tax
 * identifier, CBU/CVU check digits, v1 and v2 agreeing), the first refusal
 * named by its JSON path.
 */
export function merchantRow(m: MerchantEntry, i: number): MerchantRow {
  const at = `$.merchants[${i}]`;
  if ((m.tax_identification || m.tax) && !m.country)
    throw new ImportError(`${at}.country`, 'is required with tax_identification or tax, which must fit it');
  let platform: PlatformColumns;
  try {
    platform = readPlatformFields(m.country ?? null, m, null);
  } catch (err) {
    if (!(err instanceof BadRequestError)) throw err;
    const [first] = err.errors ?? [];
    throw new ImportError(first ? `${at}.${first.field}` : at, first?.message ?? err.message);
  }
  const { tax_identification: _v2, tax: _v1, ...fields } = m;
  return {
    ...fields,
    name: m.fantasy_name ?? m.business_name ?? m.name,
    tax_identification_type: platform.tax?.type,
    tax_identification_number: platform.tax?.number,
    representative: platform.representative ?? undefined,
    settlement_condition: platform.settlementCondition ?? undefined,
    financial_info: platform.financialInfo ?? undefined,
  };
}

/** 'merchants[3].customer_id' → '$.merchants[3].customer_id'; '' (the document) → '$'. */
const jsonPath = (field: string) => (field ? `$.${field}` : '$');

/**
 * The API's own body validator, handed in by the composition root so that the
 * import accepts what the API accepts, in its words: the document, or its first
 * refusal as a field path and message.
 */
export type DocumentCheck = (raw: unknown) => { document: ImportDocument } | { path: string; message: string };

/** Ids come out of the check in lower case (the Uuid schema's `x-lowercase`), as in a request body. */
export function parseDocument(check: DocumentCheck, input: unknown): Normalised {
  const checked = check(input);
  if (!('document' in checked)) throw new ImportError(jsonPath(checked.path), checked.message);
  const raw = checked.document;
  return {
    customers: raw.customers ?? [],
    merchants: raw.merchants ?? [],
    users: (raw.users ?? []).map((u) => ({
      ...u,
      email: normaliseEmail(u.email),
      merchant_id: u.merchant_id ?? null,
      password: u.password,
      role: u.role,
    })),
    payment_plans: (raw.payment_plans ?? []).map((p, i) => {
      // As POST /v1/fee-rules checks it: exactly, since the schema's multipleOf has a tolerance.
      if (exactCommission(p.commission) === undefined)
        throw new ImportError(`$.payment_plans[${i}].commission`, `must have at most ${COMMISSION_DECIMALS} decimals`);
      return { ...p, customer_id: p.customer_id ?? null };
    }),
    assignments: raw.assignments ?? [],
  };
}

/** A user entry with a password is a login user (one per e-mail); without, an integration user of its customer. */
const userKey = (u: { email: string; customer_id: string; password?: string | undefined }) =>
  u.password ? u.email : `${u.customer_id}|${u.email}`;

/** merchant_code is unique within a customer: in the file, and against the customer's other merchants. */
async function checkMerchantCodes(dal: Pick<ImportDal, 'merchantsWithCodes'>, doc: Normalised): Promise<void> {
  const coded = doc.merchants.flatMap((m, i) =>
    m.merchant_code === undefined ? [] : [{ i, id: m.id, customer_id: m.customer_id, merchant_code: m.merchant_code }],
  );
  const holder = new Map<string, string>();
  for (const c of coded) {
    const key = JSON.stringify([c.customer_id, c.merchant_code]);
    if (holder.has(key))
      throw new ImportError(
        `$.merchants[${c.i}].merchant_code`,
        `duplicate merchant_code ${c.merchant_code} for customer ${c.customer_id}`,
      );
    holder.set(key, c.id);
  }
  for (const taken of await dal.merchantsWithCodes(
    coded.map(({ customer_id, merchant_code }) => ({ customer_id, merchant_code })),
  )) {
    const entry = coded.find((c) => c.customer_id === taken.customer_id && c.merchant_code === taken.merchant_code);
    if (entry && entry.id !== taken.id)
      throw new ImportError(
        `$.merchants[${entry.i}].merchant_code`,
        `merchant ${taken.id} of customer ${taken.customer_id} already has merchant_code ${taken.merchant_code}`,
      );
  }
}

/**
 * Cross-references inside the document and against what the database already holds.
 * Returns the owning customer of every merchant the document assigns plans to.
 */
/** The reads of the import, on the pool. */
export type ImportReads = Pick<
  ImportDal,
  'loginPasswordHashes' | 'merchantsWithCodes' | 'existingCustomerIds' | 'merchantOwners' | 'plansByIds'
>;

export async function checkReferences(dal: ImportReads, doc: Normalised): Promise<Set<string>> {
  const duplicates = <T>(list: T[], name: string, key: (item: T) => string, what: (item: T) => string) => {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      const k = key(item);
      if (seen.has(k)) throw new ImportError(`$.${name}[${i}]`, `duplicate ${what(item)}`);
      seen.add(k);
    });
  };
  duplicates(
    doc.customers,
    'customers',
    (c) => c.id,
    (c) => `id ${c.id}`,
  );
  duplicates(
    doc.merchants,
    'merchants',
    (m) => m.id,
    (m) => `id ${m.id}`,
  );
  duplicates(
    doc.payment_plans,
    'payment_plans',
    (p) => p.id,
    (p) => `id ${p.id}`,
  );
  duplicates(doc.users, 'users', userKey, (u) =>
    u.password ? `email ${u.email}` : `email ${u.email} for customer ${u.customer_id}`,
  );

  const customerIds = new Set(doc.customers.map((c) => c.id));
  const merchantOwner = new Map(doc.merchants.map((m) => [m.id, m.customer_id]));
  const plan = new Map(doc.payment_plans.map((p) => [p.id, p]));

  const missingCustomers = new Set<string>();
  for (const id of [
    ...doc.merchants.map((m) => m.customer_id),
    ...doc.users.map((u) => u.customer_id),
    ...doc.payment_plans.map((p) => p.customer_id),
  ]) {
    if (id !== null && !customerIds.has(id)) missingCustomers.add(id);
  }
  for (const id of await dal.existingCustomerIds([...missingCustomers])) customerIds.add(id);

  const wantedMerchants = new Set([
    ...doc.merchants.map((m) => m.id),
    ...doc.users.flatMap((u) => (u.merchant_id ? [u.merchant_id] : [])),
    ...doc.assignments.map((a) => a.merchant_id),
  ]);
  const inactive = new Set<string>();
  /** The merchants that exist, with their country. */
  const storedCountry = new Map<string, string | null>();
  for (const m of await dal.merchantOwners([...wantedMerchants])) {
    if (m.status === 'INACTIVE') inactive.add(m.id);
    storedCountry.set(m.id, m.country);
    const moved = merchantOwner.get(m.id);
    if (moved && moved !== m.customerId) {
      const i = doc.merchants.findIndex((x) => x.id === m.id);
      throw new ImportError(
        `$.merchants[${i}].customer_id`,
        `merchant ${m.id} already belongs to customer ${m.customerId}`,
      );
    }
    if (!moved) merchantOwner.set(m.id, m.customerId);
  }
  const wantedPlans = new Set(doc.assignments.flatMap((a) => a.payment_plan_ids.filter((id) => !plan.has(id))));
  for (const p of await dal.plansByIds([...wantedPlans])) plan.set(p.id, p);

  doc.merchants.forEach((m, i) => {
    if (!customerIds.has(m.customer_id))
      throw new ImportError(`$.merchants[${i}].customer_id`, `unknown customer ${m.customer_id}`);
    if (
      !storedCountry.has(m.id) &&
      m.fantasy_name === undefined &&
      m.business_name === undefined &&
      m.name === undefined
    )
      throw new ImportError(
        `$.merchants[${i}].name`,
        'is required for a new merchant without fantasy_name or business_name',
      );
    const country = storedCountry.get(m.id);
    if (m.country && !m.tax_identification && !m.tax && country && country !== m.country)
      throw new ImportError(
        `$.merchants[${i}].country`,
        `merchant ${m.id} is in ${country}: a new country needs the tax_identification that fits it`,
      );
  });
  await checkMerchantCodes(dal, doc);
  doc.payment_plans.forEach((p, i) => {
    if (p.customer_id && !customerIds.has(p.customer_id))
      throw new ImportError(`$.payment_plans[${i}].customer_id`, `unknown customer ${p.customer_id}`);
  });
  doc.users.forEach((u, i) => {
    const at = `$.users[${i}]`;
    if (!customerIds.has(u.customer_id))
      throw new ImportError(`${at}.customer_id`, `unknown customer ${u.customer_id}`);
    if (u.type === 'CUSTOMER' && u.merchant_id)
      throw new ImportError(`${at}.merchant_id`, 'a CUSTOMER user has no merchant_id');
    if (u.type === 'MERCHANT') {
      if (!u.merchant_id) throw new ImportError(`${at}.merchant_id`, 'a MERCHANT user needs merchant_id');
      const owner = merchantOwner.get(u.merchant_id);
      if (!owner) throw new ImportError(`${at}.merchant_id`, `unknown merchant ${u.merchant_id}`);
      if (owner !== u.customer_id)
        throw new ImportError(
          `${at}.merchant_id`,
          `merchant ${u.merchant_id} does not belong to customer ${u.customer_id}`,
        );
      if (u.password)
        throw new ImportError(`${at}.password`, 'merchant users act through API keys only and have no password');
    }
    if (u.role && !u.password)
      throw new ImportError(`${at}.role`, 'only login users (with a password) have a role; API keys have none');
  });
  doc.assignments.forEach((a, i) => {
    const owner = merchantOwner.get(a.merchant_id);
    if (!owner) throw new ImportError(`$.assignments[${i}].merchant_id`, `unknown merchant ${a.merchant_id}`);
    if (inactive.has(a.merchant_id))
      throw new ImportError(
        `$.assignments[${i}].merchant_id`,
        `merchant ${a.merchant_id} is INACTIVE and gets no new plans`,
      );
    const seenKinds = new Set<string>();
    a.payment_plan_ids.forEach((id, j) => {
      const at = `$.assignments[${i}].payment_plan_ids[${j}]`;
      const p = plan.get(id);
      if (!p || (p.customer_id !== null && p.customer_id !== owner))
        throw new ImportError(at, `unknown payment plan ${id} for this merchant's customer`);
      const kind = [p.card_brand, p.payment_method, p.is_international, p.has_installments, p.term].join('|');
      if (seenKinds.has(kind)) throw new ImportError(at, 'conflicts with another plan of the same kind and term');
      seenKinds.add(kind);
    });
  });
  return new Set(doc.assignments.map((a) => merchantOwner.get(a.merchant_id)!));
}

/** An import never changes an existing user's type, customer or merchant. */
export function refuseUser(doc: Normalised, refused: RefusedUser, login: boolean): ImportError {
  const i = doc.users.findIndex(
    (u) => Boolean(u.password) === login && u.email === refused.email && u.customer_id === refused.customer_id,
  );
  return new ImportError(
    `$.users[${i}]`,
    login
      ? `user ${refused.email} is already the login user of another customer; an import never moves a user`
      : `user ${refused.email} already exists for customer ${refused.customer_id} with another type or merchant; an import never changes a user's type, customer or merchant`,
  );
}
