/**
 * The answers kept for Idempotency-Key retries (migration 0019). A request
 * claims its key with one upsert: the row is new, or expired, or its holder's
 * lease ran out (a crashed instance), and then the claim's token is the
 * caller's; otherwise the row says what the key holds. The answer is written in
 * the transaction of the change it reports, only by the token that holds it.
 * Every body is sealed by the key ring, bound to its row: many answers carry a
 * secret, and sealing costs microseconds.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { type Db, queryRows } from '../../db/database.js';
import { idempotencyKeys } from '../../db/schema.js';
import type { StoredAnswer } from '../../lib/change-context.js';
import type { SealedValues } from '../../lib/sealed-values.js';

/** Whose key it is and for what: the caller, its customer and the operation (method and route). */
export interface KeyScope {
  customerId: string;
  caller: string;
  operation: string;
  key: string;
}

/** What a key holds when the request could not claim it. */
export type HeldKey =
  | { state: 'claimed'; id: string; token: string }
  | { state: 'other_request' }
  | { state: 'in_flight' }
  /** `answer` null: the kept answer no longer opens (tampered). */
  | { state: 'answered'; answer: StoredAnswer | null };

const bodyCell = (id: string) => ({ table: 'idempotency_keys', column: 'body', row: id });

export function createIdempotencyDal(db: Db, sealed: SealedValues) {
  return {
    /**
     * Claims `scope` for a request of `fingerprint`, held for `leaseMs`; the entry lives `ttlSeconds`.
     * Answers the claim, or what the key holds instead.
     */
    async claim(scope: KeyScope, fingerprint: string, leaseMs: number, ttlSeconds: number): Promise<HeldKey> {
      const token = randomUUID();
      const lease = sql`now() + ${leaseMs} * interval '1 millisecond'`;
      const [taken] = await queryRows<{ id: string }>(
        db,
        sql`INSERT INTO ${idempotencyKeys} AS k
              (id, customer_id, caller, operation, key, fingerprint, token, lease_until, expires_at)
            VALUES (${randomUUID()}, ${scope.customerId}, ${scope.caller}, ${scope.operation}, ${scope.key},
              ${fingerprint}, ${token}, ${lease}, now() + ${ttlSeconds} * interval '1 second')
            ON CONFLICT (customer_id, caller, operation, key) DO UPDATE SET
              fingerprint = excluded.fingerprint, token = excluded.token, lease_until = excluded.lease_until,
              status = NULL, content_type = NULL, location = NULL, body = NULL,
              created_at = now(), expires_at = excluded.expires_at
            WHERE k.expires_at <= now()
              OR (k.status IS NULL AND k.lease_until <= now() AND k.fingerprint = excluded.fingerprint)
            RETURNING k.id`,
      );
      if (taken) return { state: 'claimed', id: taken.id, token };
      const [held] = await db
        .select()
        .from(idempotencyKeys)
        .where(
          and(
            eq(idempotencyKeys.customerId, scope.customerId),
            eq(idempotencyKeys.caller, scope.caller),
            eq(idempotencyKeys.operation, scope.operation),
            eq(idempotencyKeys.key, scope.key),
          ),
        );
      // Gone between the two statements (removed as expired): the caller tries again.
      if (!held) return { state: 'in_flight' };
      if (held.fingerprint !== fingerprint) return { state: 'other_request' };
      if (held.status === null) return { state: 'in_flight' };
      const body = sealed.open(bodyCell(held.id), held.body);
      return {
        state: 'answered',
        answer:
          body === null ? null : { status: held.status, contentType: held.contentType, location: held.location, body },
      };
    },

    /** Stores the answer of the claim `id` held by `token`; false when the claim was taken over. */
    async answer(id: string, token: string, answer: StoredAnswer): Promise<boolean> {
      const rows = await db
        .update(idempotencyKeys)
        .set({
          status: answer.status,
          contentType: answer.contentType,
          location: answer.location,
          body: sealed.seal(bodyCell(id), answer.body),
        })
        .where(and(eq(idempotencyKeys.id, id), eq(idempotencyKeys.token, token)))
        .returning({ id: idempotencyKeys.id });
      return rows.length > 0;
    },

    /** Lets go of a claim that has no answer to keep (a 5xx, a 429): a retry is processed again. */
    async release(id: string, token: string): Promise<void> {
      await db
        .delete(idempotencyKeys)
        .where(
          and(eq(idempotencyKeys.id, id), eq(idempotencyKeys.token, token), sql`${idempotencyKeys.status} IS NULL`),
        );
    },

    /** Removes up to `limit` expired entries; answers how many. */
    async removeExpired(limit: number): Promise<number> {
      const rows = await queryRows<{ id: string }>(
        db,
        sql`DELETE FROM ${idempotencyKeys} WHERE id IN (
              SELECT id FROM ${idempotencyKeys} WHERE expires_at <= now() LIMIT ${limit} FOR UPDATE SKIP LOCKED)
            RETURNING id`,
      );
      return rows.length;
    },
  };
}

export type IdempotencyDal = ReturnType<typeof createIdempotencyDal>;
