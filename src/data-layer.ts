/**
 * The data layer: the only holder of the database. It binds every feature DAL
 * to the pool for reads, and to each transaction of a unit of work for writes
 * (src/db/unit-of-work.ts), which it hands the audit and event writers, so that
 * db/ knows no feature. Services receive what they need of it, never a Db.
 */
import { createApiKeysDal } from './features/api-keys/api-keys-dal.js';
import { createAuditDal, recordAudit } from './features/audit/audit-dal.js';
import { createAuthDal } from './features/auth/auth-dal.js';
import { createSigningKeysDal } from './features/auth/signing-keys-dal.js';
import { createFeeRulesDal } from './features/fee-plans/fee-rules-dal.js';
import { createScheduledChangesDal } from './features/fee-plans/scheduled-changes-dal.js';
import { createMerchantsDal } from './features/merchants/merchants-dal.js';
import { createImportDal } from './features/operator/import-dal.js';
import { createPaymentPlansDal } from './features/fee-plans/payment-plans-dal.js';
import { createWebhooksDal } from './features/webhooks/webhooks-dal.js';
import { createUsersDal } from './features/users/users-dal.js';
import { createMailDal } from './features/mail/mail-dal.js';
import { createResetLimitsDal } from './features/users/reset-limits-dal.js';
import { createSecretsDal } from './features/secrets/secrets-dal.js';
import { insertEvents } from './features/events/events-dal.js';
import { emitAuditRecord } from './features/events/audit-record-events.js';
import { createIdempotencyDal } from './features/idempotency/idempotency-dal.js';
import { createChangeRequestsDal } from './features/change-requests/change-requests-dal.js';
import { APPROVAL_GATE } from './features/change-requests/approval-gate.js';
import { IdempotencyKeyInUseError } from './errors.js';
import type { SealedValues } from './lib/sealed-values.js';
import type { Database, Db } from './db/database.js';
import { readOnly } from './db/read-only.js';
import { type ChangeWriters, createUnitOfWork } from './db/unit-of-work.js';

/** Every feature DAL, bound to `on` (the pool or a transaction) of a database of `driver`; secrets sealed by `sealed`. */
function bindDals(on: Db, driver: Database['driver'], sealed: SealedValues) {
  return {
    apiKeys: createApiKeysDal(on),
    audit: createAuditDal(on),
    auth: createAuthDal(on, sealed),
    signingKeys: createSigningKeysDal(on, sealed),
    feeRules: createFeeRulesDal(on, driver),
    merchants: createMerchantsDal(on),
    import: createImportDal(on),
    paymentPlans: createPaymentPlansDal(on),
    webhooks: createWebhooksDal(on, sealed),
    scheduledChanges: createScheduledChangesDal(on),
    users: createUsersDal(on, sealed),
    mail: createMailDal(on, sealed),
    resetLimits: createResetLimitsDal(on),
    secrets: createSecretsDal(on),
    idempotency: createIdempotencyDal(on, sealed),
    changeRequests: createChangeRequestsDal(on),
  };
}

export type Dals = ReturnType<typeof bindDals>;

/**
 * What every unit of work writes besides the change itself: its audit record
 * (and the record as an AUDIT_RECORD event, for a customer that subscribes), its
 * domain events; and the approval gate, which may hold a fee change instead.
 */
export const CHANGE_WRITERS: ChangeWriters = {
  audit: async (tx, context, event) => {
    const auditId = await recordAudit(tx, context, event);
    if (event.customerId !== null) await emitAuditRecord(tx, context, event.customerId, auditId);
  },
  events: insertEvents,
  approvals: APPROVAL_GATE,
};

/**
 * The read methods of each DAL, by name: all of it that services reach on the
 * pool. Every other method writes or locks, and runs in a unit of work.
 */
export const READS = {
  apiKeys: ['countEnabledKeys', 'findByHash', 'list', 'findRecord'],
  audit: ['list', 'inBatches'],
  auth: [
    'findLoginUser',
    'findUserEmail',
    'listRevokedSessionIds',
    'isSessionRevoked',
    'listCustomersRequiringMfa',
    'customerRequiresMfa',
    'findChallenge',
  ],
  signingKeys: ['listVerifying'],
  feeRules: ['customerExists', 'assignableMerchants', 'previewReplacement', 'timeline', 'plansAt'],
  merchants: [
    'enabledKeyHashes',
    'count',
    'pageInBatches',
    'find',
    'belongsToCustomer',
    'notOfCustomer',
    'inactiveAmong',
    'statusesOf',
  ],
  import: [
    'existingCustomerIds',
    'merchantOwners',
    'plansByIds',
    'merchantsWithCodes',
    'hasNoCustomers',
    'loginPasswordHashes',
  ],
  paymentPlans: ['list', 'findInCatalogue', 'findPlans', 'listCatalogue', 'findIdentical'],
  webhooks: [
    'queueStats',
    'countForCustomer',
    'find',
    'list',
    'listEnabledIds',
    'listDeliveries',
    'subscribesToAuditRecords',
  ],
  scheduledChanges: ['list', 'dueCandidates', 'pendingFor'],
  users: ['passwordHash', 'totp', 'list', 'find', 'findLoginUser', 'keyHashes', 'customer'],
  mail: [],
  resetLimits: [],
  secrets: ['digestKey', 'legacyValues', 'kidCounts'],
  idempotency: [],
  changeRequests: ['find', 'list', 'answerableUsers'],
} as const satisfies { [K in keyof Dals]: ReadonlyArray<keyof Dals[K]> };

/**
 * The sanctioned writes: single statements that run on the pool, outside any
 * unit of work, each for the reason docs/design.md gives ("Reads on the pool,
 * writes in a unit of work").
 * test/platform/write-path.test.ts fails on a write reachable any other way.
 */
export const SANCTIONED_WRITES = {
  auth: ['openSession'],
  idempotency: ['claim'],
} as const satisfies { [K in keyof Dals]?: ReadonlyArray<keyof Dals[K]> };

type Names<T, K extends PropertyKey> = K extends keyof T ? (T[K] extends ReadonlyArray<infer N> ? N : never) : never;

/** Each DAL on the pool: its reads, and its sanctioned writes. */
export type PoolDals = {
  [K in keyof Dals]: Pick<Dals[K], Extract<Names<typeof READS, K> | Names<typeof SANCTIONED_WRITES, K>, keyof Dals[K]>>;
};

/** The named methods of `dal`, nothing else. */
function pick<T extends object, K extends keyof T>(dal: T, names: readonly K[]): Pick<T, K> {
  return Object.fromEntries(names.map((name) => [name, dal[name]])) as Pick<T, K>;
}

/**
 * The DALs on the pool: each read bound to the read-only view of the database
 * (src/db/read-only.ts), each sanctioned write to the database itself.
 */
function poolDals(database: Database, sealed: SealedValues): PoolDals {
  const reads = bindDals(readOnly(database.db), database.driver, sealed);
  const writes = bindDals(database.db, database.driver, sealed);
  const pool: Record<string, object> = {};
  for (const name of Object.keys(READS) as Array<keyof Dals>) {
    const sanctioned: readonly string[] =
      (SANCTIONED_WRITES as Partial<Record<keyof Dals, readonly string[]>>)[name] ?? [];
    pool[name] = {
      ...pick(reads[name], READS[name] as ReadonlyArray<keyof (typeof reads)[typeof name]>),
      ...pick(writes[name], sanctioned as ReadonlyArray<keyof (typeof writes)[typeof name]>),
    };
  }
  return pool as PoolDals;
}

export function createDataLayer(database: Database, sealed: SealedValues) {
  return {
    /** The DALs on the pool: reads, and the sanctioned writes. */
    dal: poolDals(database, sealed),
    /** Changes: one transaction each, with its audit record, notice and event. */
    uow: createUnitOfWork(database.db, (on) => bindDals(on, database.driver, sealed), {
      ...CHANGE_WRITERS,
      // A claim taken over meanwhile (its lease ran out) must not see its change commit: the other request owns the key.
      async answer(tx, claim, answer) {
        if (!(await createIdempotencyDal(tx, sealed).answer(claim.id, claim.token, answer)))
          throw new IdempotencyKeyInUseError();
      },
    }),
  };
}

export type DataLayer = ReturnType<typeof createDataLayer>;
