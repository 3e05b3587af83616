/**
 * Idempotency-Key rules (contract section 21, docs/design.md "Idempotent
 * requests"): a request claims its key before it runs; a retry of the same
 * request replays the stored answer, a different request under the key is a
 * 422, and one still in flight anywhere a 409. The claim is a row committed on
 * its own, so every instance sees it: one upsert on the pool, a sanctioned write
 * (docs/design.md), since BEGIN and COMMIT around it would add two round trips
 * to every keyed request. Its answer is stored by the unit of work with the
 * change (src/db/unit-of-work.ts), or here when no change was made.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConflictError, IdempotencyKeyInUseError, UnprocessableError } from '../../errors.js';
import { type ChangeContext, type StoredAnswer, SYSTEM_CONTEXT } from '../../lib/change-context.js';
import type { IdempotencyDal, KeyScope } from './idempotency-dal.js';

/** How long an answer is replayed, as the contract says. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** Expired entries removed per tick of the sweep: bounded work, the rest at the next tick. */
export const EXPIRED_BATCH = 1000;

export type { KeyScope };

/** A key held by this request: its row and the token that proves it. */
export interface HeldClaim {
  id: string;
  token: string;
}

export type Begun = { claim: HeldClaim } | { replay: StoredAnswer };

export interface IdempotencyServiceDeps {
  uow: UnitOfWork<{ idempotency: IdempotencyDal }>;
  /** The claim, on the pool: one statement, atomic by itself. */
  idempotencyDal: Pick<IdempotencyDal, 'claim'>;
  /** How long a claim is held before another request may take it over (its holder died). */
  leaseMs: number;
}

export function createIdempotencyService({ uow, idempotencyDal, leaseMs }: IdempotencyServiceDeps) {
  /** These writes report no change of their own: the request's claim stays out of them. */
  const bare = (context: ChangeContext): ChangeContext => ({ requestId: context.requestId, actor: context.actor });

  return {
    /** Claims `scope` for the request of `fingerprint`, or answers the stored answer to replay. */
    async begin(scope: KeyScope, fingerprint: string): Promise<Begun> {
      const held = await idempotencyDal.claim(scope, fingerprint, leaseMs, IDEMPOTENCY_TTL_SECONDS);
      switch (held.state) {
        case 'claimed':
          return { claim: { id: held.id, token: held.token } };
        case 'other_request':
          throw new UnprocessableError('idempotency_key_reused');
        case 'in_flight':
          throw new IdempotencyKeyInUseError();
        case 'answered': {
          if (held.answer) return { replay: held.answer };
          // An answer that no longer opens (tampered: the service refuses to start without a key the
          // table needs) is absent, but the change it answered was made: never made twice (section 21).
          throw new ConflictError('idempotency_answer_unreadable');
        }
      }
    },

    /** Stores the answer of a request that changed nothing (a 4xx, a dry run) in its own small transaction. */
    async finish(claim: HeldClaim, answer: StoredAnswer, context: ChangeContext): Promise<void> {
      await uow.write(bare(context), ({ dal: { idempotency } }) => idempotency.answer(claim.id, claim.token, answer));
    },

    /** Lets go of a claim whose answer is not kept (5xx, 429): a retry is processed again. */
    async release(claim: HeldClaim, context: ChangeContext): Promise<void> {
      await uow.write(bare(context), ({ dal: { idempotency } }) => idempotency.release(claim.id, claim.token));
    },

    /** Removes a batch of expired entries; true when there may be more. */
    async removeExpired(): Promise<boolean> {
      const removed = await uow.write(SYSTEM_CONTEXT, ({ dal }) => dal.idempotency.removeExpired(EXPIRED_BATCH));
      return removed === EXPIRED_BATCH;
    },
  };
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;
