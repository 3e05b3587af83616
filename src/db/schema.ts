/**
 * The whole data model. Later features add behaviour, not tables.
 * Integrity lives in the database: foreign keys, checks and unique indexes make
 * corrupt states impossible even if a code path forgets a rule. This file is
 * the one import point; the tables live in schema-*.ts by what they hold.
 */
export * from './schema-accounts.js';
export * from './schema-credentials.js';
export * from './schema-events.js';
export * from './schema-plans.js';
export * from './schema-approvals.js';
