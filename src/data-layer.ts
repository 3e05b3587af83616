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
import type { SealedValues } from './lib/sealed-values.js';
import type { Database, Db } from './db/database.js';
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
  };
}

export type Dals = ReturnType<typeof bindDals>;

/** What every unit of work writes besides the change itself: its audit record and its domain events. */
export const CHANGE_WRITERS: ChangeWriters = { audit: recordAudit, events: insertEvents };

export function createDataLayer(database: Database, sealed: SealedValues) {
  return {
    /** The DALs on the pool: reads, and writes that are one statement of their own. */
    dal: bindDals(database.db, database.driver, sealed),
    /** Changes: one transaction each, with its audit record, notice and event. */
    uow: createUnitOfWork(database.db, (on) => bindDals(on, database.driver, sealed), CHANGE_WRITERS),
  };
}

export type DataLayer = ReturnType<typeof createDataLayer>;
