/**
 * Queries of change requests (migration 0023) and of the customer's approval
 * policy. A request is locked (FOR UPDATE) by whatever decides it: an approval,
 * a rejection, a cancel or the expiry sweep, so exactly one of them wins.
 */
import { and, eq, sql } from 'drizzle-orm';
import { type Db, queryRows } from '../../db/database.js';
import { newestFirstPage } from '../../db/newest-first-page.js';
import { changeRequests, customers } from '../../db/schema.js';
import type { Actor } from '../../lib/change-context.js';
import type { PageRequest } from '../../lib/pagination.js';

export const CHANGE_REQUEST_STATUSES = ['PENDING', 'APPLIED', 'REJECTED', 'CANCELLED', 'EXPIRED', 'FAILED'] as const;
export type ChangeRequestStatus = (typeof CHANGE_REQUEST_STATUSES)[number];
export type ApprovalPolicy = 'NONE' | 'REQUIRED';

/** Who asked or decided (a fee change needs a customer caller), with the e-mail of the user: the login user, or the user a key belongs to. */
export interface Person {
  type: 'user' | 'api_key';
  id: string;
  email: string | null;
}

export interface StoredRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface ChangeRequestRow {
  id: string;
  customerId: string;
  status: ChangeRequestStatus;
  operation: string;
  subjectId: string | null;
  request: StoredRequest;
  preview: unknown;
  requestedBy: Person;
  reviewedBy: Person | null;
  reason: string | null;
  result: unknown;
  requestId: string | null;
  expiresAt: Date;
  decidedAt: Date | null;
  appliedAt: Date | null;
  createdAt: Date;
}

export interface NewChangeRequest {
  customerId: string;
  operation: string;
  subjectId: string | null;
  request: StoredRequest;
  preview: unknown;
  requestedBy: Actor;
  requestId: string | null;
  /** Sooner than `ttlDays` after it is made, if it has an instant of its own. */
  expiresAt: Date | null;
  ttlDays: number;
}

/** How a request was decided: by a person (approved, rejected, cancelled) or by the clock or a failure. */
export interface Decision {
  status: Exclude<ChangeRequestStatus, 'PENDING'>;
  reviewedBy?: Actor | null;
  reason?: string | null;
  result?: unknown;
}

const t = changeRequests;

/** A person of the record, with the e-mail (as it is now) of the login user, or of the user the key belongs to. */
const person = (column: typeof t.requestedBy | typeof t.reviewedBy) =>
  sql<Person | null>`CASE WHEN ${column} IS NULL THEN NULL ELSE ${column} || jsonb_build_object('email',
    (SELECT u.email FROM users u WHERE u.id = CASE ${column}->>'type'
       WHEN 'user' THEN (${column}->>'id')::uuid
       WHEN 'api_key' THEN (SELECT k.user_id FROM api_keys k WHERE k.id = (${column}->>'id')::uuid) END)) END`;

const columns = {
  id: t.id,
  customerId: t.customerId,
  status: sql<ChangeRequestStatus>`${t.status}`,
  operation: t.operation,
  subjectId: t.subjectId,
  request: sql<StoredRequest>`${t.request}`,
  preview: t.preview,
  requestedBy: sql<Person>`${person(t.requestedBy)}`,
  reviewedBy: person(t.reviewedBy),
  reason: t.reason,
  result: t.result,
  requestId: t.requestId,
  expiresAt: t.expiresAt,
  decidedAt: t.decidedAt,
  appliedAt: t.appliedAt,
  createdAt: t.createdAt,
};

export function createChangeRequestsDal(db: Db) {
  return {
    /** The customer's approval policy of fee changes (NONE for a customer that does not exist). */
    async policy(customerId: string): Promise<ApprovalPolicy> {
      const [row] = await db
        .select({ policy: sql<ApprovalPolicy>`${customers.feeChangeApproval}` })
        .from(customers)
        .where(eq(customers.id, customerId));
      return row?.policy ?? 'NONE';
    },

    async insert({ ttlDays, expiresAt, ...request }: NewChangeRequest): Promise<ChangeRequestRow> {
      // Dated by the transaction's clock, as created_at is: exactly ttlDays later, or the sooner instant.
      const ttlEnd = sql`now() + make_interval(days => ${ttlDays})`;
      const [inserted] = await db
        .insert(t)
        .values({
          ...request,
          expiresAt: expiresAt ? sql`LEAST(${ttlEnd}, ${expiresAt.toISOString()}::timestamptz)` : ttlEnd,
        })
        .returning({ id: t.id });
      return (await this.find(request.customerId, inserted!.id))!;
    },

    async find(customerId: string, id: string): Promise<ChangeRequestRow | null> {
      const [row] = await db
        .select(columns)
        .from(t)
        .where(and(eq(t.id, id), eq(t.customerId, customerId)));
      return row ?? null;
    },

    /** The customer's request `id`, its row locked until the transaction ends (null: none such). */
    async lock(customerId: string, id: string): Promise<ChangeRequestRow | null> {
      const [row] = await db
        .select({ id: t.id })
        .from(t)
        .where(and(eq(t.id, id), eq(t.customerId, customerId)))
        .for('update');
      return row ? this.find(customerId, row.id) : null;
    },

    list(
      customerId: string,
      status: ChangeRequestStatus | undefined,
      page: PageRequest,
    ): Promise<{ rows: ChangeRequestRow[]; total: number }> {
      return newestFirstPage<ChangeRequestRow>(db, t, columns, customerId, status, page);
    },

    /**
     * The users who answer for what `actor` asked: a login user is itself; a key,
     * the user it belongs to, whoever made it and whoever rolled it into being (each
     * held it, or made the key that did; a roll keeps the first key's maker), through
     * keys made or rolled by keys, and the customer's other users of the same e-mail
     * (an integration user's key handed to the login user of that address is theirs).
     */
    async answerableUsers(actor: Pick<Actor, 'type' | 'id'>): Promise<string[]> {
      if (actor.type === 'user') return actor.id ? [actor.id] : [];
      if (actor.type !== 'api_key' || !actor.id) return [];
      const rows = await queryRows<{ id: string }>(
        db,
        sql`
        WITH RECURSIVE chain AS (
          SELECT k.id, k.user_id, k.created_by_type, k.created_by_id, k.rolled_by_type, k.rolled_by_id
          FROM api_keys k WHERE k.id = ${actor.id}::uuid
          UNION
          SELECT k.id, k.user_id, k.created_by_type, k.created_by_id, k.rolled_by_type, k.rolled_by_id
          FROM api_keys k JOIN chain c ON (c.created_by_type = 'api_key' AND k.id = c.created_by_id)
            OR (c.rolled_by_type = 'api_key' AND k.id = c.rolled_by_id)
        ), answerable AS (
          SELECT user_id AS id FROM chain
          UNION SELECT created_by_id FROM chain WHERE created_by_type = 'user'
          UNION SELECT rolled_by_id FROM chain WHERE rolled_by_type = 'user'
        )
        SELECT DISTINCT same.id FROM answerable a JOIN users u ON u.id = a.id
        JOIN users same ON same.customer_id = u.customer_id AND same.email = u.email`,
      );
      return rows.map((row) => row.id);
    },

    /** Decides a locked PENDING request; APPLIED also dates its application. */
    async decide(customerId: string, id: string, decision: Decision): Promise<ChangeRequestRow> {
      await db
        .update(t)
        .set({
          status: decision.status,
          reviewedBy: decision.reviewedBy ?? null,
          reason: decision.reason ?? null,
          result: decision.result ?? null,
          decidedAt: sql`statement_timestamp()`,
          appliedAt: decision.status === 'APPLIED' ? sql`statement_timestamp()` : null,
        })
        .where(and(eq(t.id, id), eq(t.customerId, customerId)));
      return (await this.find(customerId, id))!;
    },

    /**
     * Expires at most `limit` pending requests whose instant has passed, skipping
     * those another transaction holds (an approval running now); answers them.
     */
    async expireDue(limit: number): Promise<ChangeRequestRow[]> {
      const expired = await queryRows<{ id: string; customer_id: string }>(
        db,
        sql`
        UPDATE change_requests SET status = 'EXPIRED', decided_at = statement_timestamp()
        WHERE id IN (SELECT id FROM change_requests
                     WHERE status = 'PENDING' AND expires_at <= statement_timestamp()
                     ORDER BY expires_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING id, customer_id`,
      );
      const rows: ChangeRequestRow[] = [];
      for (const row of expired) rows.push((await this.find(row.customer_id, row.id))!);
      return rows;
    },
  };
}

export type ChangeRequestsDal = ReturnType<typeof createChangeRequestsDal>;
