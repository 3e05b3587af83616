/**
 * Merchants (docs/api.md#merchants): the listing and one merchant, onboarding
 * and changes by customer callers, deactivation (its keys refused on every
 * instance, no new plans), and the one rule every merchant-scoped read shares:
 * whose merchant may be named.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Notice, UnitOfWork, WriteScope } from '../../db/unit-of-work.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import type { Permits } from '../../lib/permits.js';
import { type TakenBatch, takeEach } from '../../lib/streamed-batches.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import type { CustomerLocks } from '../../db/customer-locks.js';
import { merchantResource, readPlatformFields } from './merchant-shapes.js';
import type { MerchantChanges, MerchantListRow, MerchantRow, MerchantScope, MerchantsDal } from './merchants-dal.js';
import type { MerchantStatuses } from './merchant-statuses.js';
import type { MerchantResource } from './merchant-answer-schemas.js';
import type { Country, CreateMerchantRequest, MerchantStatus, UpdateMerchantRequest } from './merchants-schemas.js';

export type { MerchantResource };
export { merchantResource };

/** A listing page: its descriptor, and its merchants in order, batch by batch as they are read. */
export interface MerchantPage {
  page: Page<unknown>['page'];
  merchants: AsyncIterable<TakenBatch<MerchantResource>>;
}

/** Rows per query of a listing page: small enough that 50 pages of 10,000 at once stay within the memory budget. */
const LISTING_BATCH_ROWS = 100;

/**
 * The page's merchants, read once a page permit is held and until the reader
 * stops: a caller waiting for a permit holds no rows, and one that gives up
 * (`signal`) leaves the queue without reading any.
 */
async function* resources(
  batches: AsyncIterable<MerchantListRow[]>,
  pagePermits: Permits,
  signal: AbortSignal | undefined,
): AsyncGenerator<TakenBatch<MerchantResource>> {
  const release = await pagePermits.acquire(signal);
  try {
    for await (const rows of batches) yield takeEach(rows, merchantResource);
  } finally {
    release();
  }
}

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
  merchantsDal: Pick<MerchantsDal, 'count' | 'pageInBatches' | 'find' | 'belongsToCustomer'>;
  keyCaches: KeyCacheInvalidation;
  /** The statuses fee quotes hold: this instance drops them once a status change commits. */
  statuses: Pick<MerchantStatuses, 'changed'>;
  customerLocks: CustomerLocks<MerchantsDals>;
  /** Listing pages read at once (LISTING_CONCURRENT_PAGES): what bounds the memory of many large pages. */
  listingPagePermits: Permits;
}) {
  const { uow, merchantsDal, keyCaches, statuses, customerLocks, listingPagePermits } = deps;

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
    /**
     * The page descriptor now, the merchants as they are read: the caller writes
     * them out batch by batch, and aborts `signal` when it will not read them.
     */
    async list(
      principal: Principal,
      query: PageRequest & { q?: string | undefined; status?: string | undefined },
      signal?: AbortSignal,
    ): Promise<MerchantPage> {
      const scope = scopeOf(principal);
      const filters = { search: query.q, status: query.status?.toUpperCase() as MerchantStatus | undefined };
      const total = await merchantsDal.count(scope, filters);
      const batches = merchantsDal.pageInBatches(scope, { ...query, ...filters }, LISTING_BATCH_ROWS);
      return { page: toPage([], total, query).page, merchants: resources(batches, listingPagePermits, signal) };
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
      const platform = readPlatformFields(body.country, body, null);
      if (!platform.tax)
        throw new ValidationError([{ field: 'tax_identification', message: "is required (or v1's tax.id)" }]);
      const tax = platform.tax;
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
          representative: platform.representative ?? null,
          additionalInfo: body.additional_info ?? null,
          phone: body.phone ?? null,
          activity: body.activity ?? null,
          category: body.category ?? null,
          settlementCondition: platform.settlementCondition ?? null,
          financialInfo: platform.financialInfo ?? null,
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
        if (changes.status) {
          await pushKeyChanges(scope, row.customerId, row.id);
          scope.afterCommit(statuses.changed);
        }
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
  tax: ['taxIdentificationType', 'taxIdentificationNumber', 'financialInfo'],
  representative: ['representative'],
  phone: ['phone'],
  activity: ['activity'],
  category: ['category'],
  settlement_condition: ['settlementCondition'],
  financial_info: ['financialInfo'],
};

/**
 * What a PATCH changes: the columns of the fields sent whose value differs from
 * the merchant's (the display name follows the names), and those fields' names.
 */
function changesOf(current: MerchantRow, body: UpdateMerchantRequest) {
  const platform = readPlatformFields(current.country as Country | null, body, current);
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
    taxIdentificationType: platform.tax?.type,
    taxIdentificationNumber: platform.tax?.number,
    representative: platform.representative,
    phone: body.phone,
    activity: body.activity,
    category: body.category,
    settlementCondition: platform.settlementCondition,
    financialInfo: platform.financialInfo,
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
