/**
 * The data layer: the only holder of the database. It binds every feature DAL
 * to the pool for reads, and to each transaction of a unit of work for writes
 * (src/db/unit-of-work.ts). Services receive what they need of it, never a Db.
 */
import { createApiKeysDal } from '../features/api-keys/api-keys-dal.js';
import { createAuditDal } from '../features/audit/audit-dal.js';
import { createAuthDal } from '../features/auth/auth-dal.js';
import { createSigningKeysDal } from '../features/auth/signing-keys-dal.js';
import { createFeeRulesDal } from '../features/fee-plans/fee-rules-dal.js';
import { createScheduledChangesDal } from '../features/fee-plans/scheduled-changes-dal.js';
import { createMerchantsDal } from '../features/merchants/merchants-dal.js';
import { createImportDal } from '../features/operator/import-dal.js';
import { createPaymentPlansDal } from '../features/fee-plans/payment-plans-dal.js';
import { createWebhooksDal } from '../features/webhooks/webhooks-dal.js';
import { createUsersDal } from '../features/users/users-dal.js';
import { createMailDal } from '../features/mail/mail-dal.js';
import { createResetLimitsDal } from '../features/users/reset-limits-dal.js';
import type { Database, Db } from './database.js';
import { createUnitOfWork } from './unit-of-work.js';

/** Every feature DAL, bound to `on` (the pool or a transaction) of a database of `driver`. */
function bindDals(on: Db, driver: Database['driver']) {
  return {
    apiKeys: createApiKeysDal(on),
    audit: createAuditDal(on),
    auth: createAuthDal(on),
    signingKeys: createSigningKeysDal(on),
    feeRules: createFeeRulesDal(on, driver),
    merchants: createMerchantsDal(on),
    import: createImportDal(on),
    paymentPlans: createPaymentPlansDal(on),
    webhooks: createWebhooksDal(on),
    scheduledChanges: createScheduledChangesDal(on),
    users: createUsersDal(on),
    mail: createMailDal(on),
    resetLimits: createResetLimitsDal(on),
  };
}

export type Dals = ReturnType<typeof bindDals>;

export function createDataLayer(database: Database) {
  return {
    /** The DALs on the pool: reads, and writes that are one statement of their own. */
    dal: bindDals(database.db, database.driver),
    /** Changes: one transaction each, with its audit record, notice and event. */
    uow: createUnitOfWork(database.db, (on) => bindDals(on, database.driver)),
  };
}

export type DataLayer = ReturnType<typeof createDataLayer>;
