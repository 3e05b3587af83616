/** Scheduled fee-rule change tests: instants, the scheduled-changes endpoints, and reads of the current test's rows. */
import assert from 'node:assert/strict';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { auditEvents, domainEvents, scheduledFeeRuleChanges } from '../../src/db/schema.js';
import { type Harness, json } from './app.js';
import { bulkAssign, type Credentials, seedCatalogue } from './plans.js';

/** Fast polling: a due change is found within a tenth of a second. */
export const FAST = { scheduledChangesPollMs: 100 };

export const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

export const listChanges = (app: FastifyInstance, headers: Credentials, query = '') =>
  app.inject({ method: 'GET', url: `/v1/fee-rules/scheduled-changes${query}`, headers });
export const cancel = (app: FastifyInstance, headers: Credentials, id: string) =>
  app.inject({ method: 'DELETE', url: `/v1/fee-rules/scheduled-changes/${id}`, headers });

/** Schedules `planId` for `merchantId` an hour ahead; answers the scheduled change. */
export async function scheduleIn1h(app: FastifyInstance, headers: Credentials, merchantId: string, planId: string) {
  const res = await bulkAssign(app, headers, {
    merchant_ids: [merchantId],
    payment_plan_ids: [planId],
    effective_at: inSeconds(3600),
  });
  assert.equal(res.statusCode, 202, res.body);
  return json(res).scheduled_change;
}

/**
 * Reads and changes of the current test's scheduled changes, audit records and domain events on `h`'s database,
 * and its app with the catalogue seeded.
 */
export function scheduledChangesOn(h: Harness) {
  const db = () => h.db.current.database.db;
  return {
    db,
    rows: () => db().select().from(scheduledFeeRuleChanges),
    auditOf: (action: string) => db().select().from(auditEvents).where(eq(auditEvents.action, action)),
    eventsOf: (type: string) => db().select().from(domainEvents).where(eq(domainEvents.type, type)),
    /** Makes change `id` due now, as if its instant had come (the worker only reads the clock). */
    makeDue: (id: string, msAgo = 10) =>
      db()
        .update(scheduledFeeRuleChanges)
        .set({ effectiveAt: new Date(Date.now() - msAgo) })
        .where(eq(scheduledFeeRuleChanges.id, id)),
    statusOf: async (id: string) =>
      (await db().select().from(scheduledFeeRuleChanges).where(eq(scheduledFeeRuleChanges.id, id)))[0]!,
    async setup(overrides = FAST) {
      const app = await h.app(overrides);
      return { app, ...(await seedCatalogue(app)) };
    },
  };
}
