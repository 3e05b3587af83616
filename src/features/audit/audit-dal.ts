/**
 * Audit records are written by the same transaction as the change they describe:
 * a change without its record, or a record without its change, cannot exist.
 * The customer reads its own records back, newest first (GET /v1/audit-events).
 */
import { and, asc, count, desc, eq, gte, lt, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/database.js';
import type { AuditEvent } from '../../db/unit-of-work.js';
import { apiKeys, auditEvents, users } from '../../db/schema.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';

export type { AuditEvent };

/** The row of an audit event: inserted on its own (recordAudit) or inside a larger statement. */
export function auditValues(context: ChangeContext, event: AuditEvent): typeof auditEvents.$inferInsert {
  return {
    requestId: context.requestId,
    actorType: context.actor.type,
    actorId: context.actor.id,
    customerId: event.customerId,
    action: event.action,
    targetType: event.targetType,
    targetId: event.targetId,
    details: event.details ?? {},
  };
}

/** Writes the record; answers its id. */
export async function recordAudit(tx: Db, context: ChangeContext, event: AuditEvent): Promise<number> {
  const [row] = await tx.insert(auditEvents).values(auditValues(context, event)).returning({ id: auditEvents.id });
  return row!.id;
}

export interface AuditFilters {
  customerId: string;
  action?: string | undefined;
  /** Inclusive. */
  from?: Date | undefined;
  /** Exclusive. */
  to?: Date | undefined;
}

export interface AuditRow {
  id: number;
  action: string;
  actorType: string;
  actorId: string | null;
  /** The e-mail of the user who acted, directly or through one of its API keys. */
  actorUser: string | null;
  requestId: string | null;
  targetType: string;
  targetId: string | null;
  details: unknown;
  occurredAt: Date;
}

const actingUser = alias(users, 'acting_user');
const keyUser = alias(users, 'key_user');

/** actor_id is text (it names a user or a key); cast only the kind each join expects, so the joins probe primary keys. */
const actorIdAs = (type: string): SQL =>
  sql`(CASE WHEN ${auditEvents.actorType} = ${type} THEN ${auditEvents.actorId}::uuid END)`;

function filtersOf(filters: AuditFilters): SQL | undefined {
  return and(
    eq(auditEvents.customerId, filters.customerId),
    filters.action === undefined ? undefined : eq(auditEvents.action, filters.action),
    filters.from === undefined ? undefined : gte(auditEvents.occurredAt, filters.from),
    filters.to === undefined ? undefined : lt(auditEvents.occurredAt, filters.to),
  );
}

/** A record with the e-mail of the user who acted: the columns and joins every read of the trail shares. */
function selectRows(db: Db) {
  return db
    .select({
      id: auditEvents.id,
      action: auditEvents.action,
      actorType: auditEvents.actorType,
      actorId: auditEvents.actorId,
      actorUser: sql<string | null>`coalesce(${actingUser.email}, ${keyUser.email})`,
      requestId: auditEvents.requestId,
      targetType: auditEvents.targetType,
      targetId: auditEvents.targetId,
      details: auditEvents.details,
      occurredAt: auditEvents.occurredAt,
    })
    .from(auditEvents)
    .leftJoin(actingUser, eq(actingUser.id, actorIdAs('user')))
    .leftJoin(apiKeys, eq(apiKeys.id, actorIdAs('api_key')))
    .leftJoin(keyUser, eq(keyUser.id, apiKeys.userId));
}

export function createAuditDal(db: Db) {
  return {
    /**
     * One page of a customer's records, newest first, with the total that match:
     * a range of audit_events_customer_listing_idx (or ..._action_idx with an action).
     */
    async list(filters: AuditFilters, page: PageRequest): Promise<{ rows: AuditRow[]; total: number }> {
      const where = filtersOf(filters);
      const [totalRow] = await db.select({ total: count() }).from(auditEvents).where(where);
      const rows = await selectRows(db)
        .where(where)
        .orderBy(desc(auditEvents.occurredAt), desc(auditEvents.id))
        .limit(page.size)
        .offset(offsetOf(page));
      return { rows, total: totalRow?.total ?? 0 };
    },

    /** One record, as the trail lists it. */
    async find(id: number): Promise<AuditRow | undefined> {
      const [row] = await selectRows(db).where(eq(auditEvents.id, id));
      return row;
    },

    /**
     * Every record that matches, oldest first, `batchSize` at a time: each batch
     * starts after the last row of the one before (the listing index read
     * backwards), so a batch costs the same at the millionth row as at the first
     * and nothing but one batch is held. The next batch is read only when the
     * caller asks for it. A batch is the reader's once yielded, to empty as it
     * takes its rows: this generator keeps only the last row, whose key the next batch starts after.
     */
    async *inBatches(filters: AuditFilters, batchSize: number): AsyncGenerator<AuditRow[]> {
      const where = filtersOf(filters);
      let after: AuditRow | undefined;
      for (;;) {
        const rows: AuditRow[] = await selectRows(db)
          .where(
            after === undefined
              ? where
              : and(
                  where,
                  sql`(${auditEvents.occurredAt}, ${auditEvents.id}) > (${after.occurredAt.toISOString()}::timestamptz, ${after.id})`,
                ),
          )
          .orderBy(asc(auditEvents.occurredAt), asc(auditEvents.id))
          .limit(batchSize);
        const read = rows.length;
        after = rows.at(-1);
        if (read > 0) yield rows;
        if (read < batchSize) return;
      }
    },
  };
}

export type AuditDal = ReturnType<typeof createAuditDal>;
