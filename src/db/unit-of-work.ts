/**
 * The one write path (docs/design.md, "One write path"). A change runs in
 * `write()`: one transaction that hands out the feature DALs bound to it, and
 * with them the change's audit record, its notice to the other instances and its
 * domain event, all committed or rolled back together. After-commit hooks (cache
 * invalidation) run only once the transaction has committed. Services get a unit
 * of work, never a database handle.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { ServiceUnavailableError } from '../errors.js';
import type { Actor, ChangeContext, IdempotencyClaim, StoredAnswer } from '../lib/change-context.js';
import { type Db, sqlState } from './database-core.js';

/** What the audit trail records of a change; the audit DAL writes and reads it (src/features/audit/audit-dal.ts). */
export interface AuditEvent {
  action: string;
  customerId: string | null;
  targetType: string;
  targetId: string | null;
  details?: Record<string, unknown>;
}

/** A message to every instance, delivered by PostgreSQL on commit (LISTEN/NOTIFY); several payloads go in one statement. */
export interface Notice {
  channel: string;
  payload: string | readonly string[];
}

/**
 * The `data` of each event type. Empty here, since db/ knows no feature: the map
 * of events fills it in (src/features/events/event-map.ts, declaration merging),
 * so `emit` checks a payload against its type at compile time and costs nothing
 * at run time.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by src/features/events/event-map.ts.
export interface EventPayloads {}

/** A domain event of the change's customer: its `data` is its type's payload. */
export type DomainEvent = {
  [T in keyof EventPayloads]: { type: T; customerId: string; data: EventPayloads[T] };
}[keyof EventPayloads];

/**
 * A fee change that its customer's policy may hold for a second person's
 * approval (contract section 23): what it is, as sent, and its dry run. A
 * change asks before it writes, after its checks (a request that would be a
 * 400 is still a 400, nothing held).
 */
export interface ApprovableChange {
  customerId: string;
  /** What the change is: its approval applies it again through the same service call. */
  operation: string;
  /** The merchant, plan or scheduled change the request's path names, if any. */
  subjectId?: string | null;
  request: { method: string; path: string; body: unknown };
  /** The change's dry run, in the change's transaction. */
  preview(): Promise<unknown>;
  /** When it can no longer be approved, if sooner than the usual (a scheduled change's instant). */
  expiresAt?: Date;
  /** What its approval records as its result, of what the change's work returned (default: that value). */
  result?(applied: unknown): unknown;
  /**
   * Its dry run, read from what the change's work returned, when that says it
   * exactly: an approval with a preview hash then checks it after the one pass
   * over the rows (a mismatch rolls the change back) instead of a dry run first.
   */
  previewOf?(applied: unknown): unknown;
}

/** What a held change's request is answered: its change request (202, Location its id). */
export interface HeldForApproval {
  change_request: { id: string };
}

export interface WriteScope<D> {
  /** The feature DALs, bound to this transaction. */
  readonly dal: D;
  /** The audit record of the change, attributed to the change's actor (or `actor`, once it is known) and request. */
  audit(event: AuditEvent, actor?: Actor): Promise<void>;
  /** Tells every instance, on commit. */
  notify(notice: Notice): Promise<void>;
  /** The domain event of the change, written to the outbox that webhooks deliver from; answers its id. */
  emit(event: DomainEvent): Promise<string>;
  /** Several domain events of the change in one statement; answers their ids in order. */
  emitAll(events: readonly DomainEvent[]): Promise<string[]>;
  /** Runs `hook` once the transaction has committed; never when it rolls back. */
  afterCommit(hook: () => void): void;
  /**
   * What the change reports to its caller, when that is not what `work` returns:
   * with an Idempotency-Key, the request's answer is made of it and stored in this
   * transaction (docs/design.md, "Idempotent requests").
   */
  answer(value: unknown): void;
  /**
   * Asks whether `change` may apply now. Under a policy of approval it is held
   * as a change request: the answer is what the caller is told, and the change
   * must then write nothing else. Null: it applies now (no such policy, or this
   * is its approval, whose request is then settled in this transaction).
   */
  holdForApproval(change: ApprovableChange): Promise<HeldForApproval | null>;
}

/** What a change's scope offers the approval gate: its transaction and its audit and event writers. */
export interface GateScope {
  tx: Db;
  context: ChangeContext;
  audit(event: AuditEvent): Promise<void>;
  emit(event: DomainEvent): Promise<string>;
}

/**
 * Four-eyes approval in the write path, given by the composition (db/ knows no
 * feature): holds a change as a change request, or checks that an approval
 * may apply it and, once it ran, records it APPLIED in the same transaction.
 */
export interface ApprovalGate {
  hold(scope: GateScope, change: ApprovableChange): Promise<HeldForApproval | null>;
  /** Marks the change request applied, given what the change's work returned; answers it, which is what the approval's caller is told. */
  settle(scope: GateScope, change: ApprovableChange, applied: unknown): Promise<unknown>;
}

/**
 * How a change's audit record and domain events are written in its transaction:
 * given by the composition (src/data-layer.ts), since db/ knows no feature.
 */
export interface ChangeWriters {
  audit(tx: Db, context: ChangeContext, event: AuditEvent): Promise<void>;
  /** Writes the events in one statement; answers their ids in order. */
  events(tx: Db, context: ChangeContext, events: readonly DomainEvent[]): Promise<string[]>;
  /**
   * Stores the answer of a request that holds an Idempotency-Key with its change;
   * fails when the request no longer holds its claim. Without it, the answer is
   * stored as it is sent (src/plugins/idempotency.ts).
   */
  answer?(tx: Db, claim: IdempotencyClaim, answer: StoredAnswer): Promise<void>;
  /** Four-eyes approval of fee changes; without it every change applies at once. */
  approvals?: ApprovalGate;
}

/** An approved change's audit records name the change request, its requester and its approver. */
function withApproval(event: AuditEvent, context: ChangeContext): AuditEvent {
  const { approval } = context;
  if (!approval) return event;
  const change_request = {
    id: approval.changeRequestId,
    requested_by: approval.requestedBy,
    approved_by: context.actor,
  };
  return { ...event, details: { ...event.details, change_request } };
}

export interface UnitOfWork<D> {
  /** A change: all of `work` commits, or none of it. */
  write<T>(context: ChangeContext, work: (scope: WriteScope<D>) => Promise<T>): Promise<T>;
  /** A consistent, read-only snapshot (a dry run): the DALs bound to it, nothing can be written. */
  snapshot<T>(work: (dal: D) => Promise<T>): Promise<T>;
}

/**
 * deadlock_detected and serialization_failure: PostgreSQL rolled the whole
 * transaction back because of another one, so running it again is safe and
 * usually succeeds (two ADMINs changing each other at once).
 */
const RETRIED_STATES = new Set(['40P01', '40001']);
export const WRITE_RETRIES = 3;
/** The first retry waits about this long, each next one twice as long, with jitter: the two sides part. */
const RETRY_BASE_MS = 20;

/** Whether `err` ended the transaction because of another one; then the attempt may run again. */
function isConflict(err: unknown): boolean {
  return RETRIED_STATES.has(sqlState(err) ?? '');
}

/** `bind` builds the feature DALs on a transaction; it runs once per attempt of a unit of work. */
export function createUnitOfWork<D>(db: Db, bind: (on: Db) => D, writers: ChangeWriters): UnitOfWork<D> {
  /** One attempt: the transaction, then its hooks. Each attempt has its own hooks: a rolled-back one's never run. */
  async function attempt<T>(context: ChangeContext, work: (scope: WriteScope<D>) => Promise<T>): Promise<T> {
    const hooks: Array<() => void> = [];
    const claim = context.idempotency;
    let reported: { value: unknown } | undefined;
    let stored: StoredAnswer | undefined;
    let approved: ApprovableChange | undefined;
    const result = await db.transaction(async (tx) => {
      const audit = (event: AuditEvent, actor?: Actor) =>
        writers.audit(tx, actor ? { ...context, actor } : context, withApproval(event, context));
      const emit = async (event: DomainEvent) => (await writers.events(tx, context, [event]))[0]!;
      const gate: GateScope = { tx, context, audit, emit };
      const value = await work({
        dal: bind(tx),
        audit,
        notify: async ({ channel, payload }) => {
          // Any text is safe in a JSON array: one parameter however many payloads.
          if (typeof payload === 'string') await tx.execute(sql`SELECT pg_notify(${channel}, ${payload})`);
          else if (payload.length > 0)
            await tx.execute(
              sql`SELECT pg_notify(${channel}, p) FROM jsonb_array_elements_text(${JSON.stringify(payload)}::jsonb) AS p`,
            );
        },
        emit,
        emitAll: (events) => writers.events(tx, context, events),
        afterCommit: (hook) => {
          hooks.push(hook);
        },
        answer: (reportedValue) => {
          reported = { value: reportedValue };
        },
        holdForApproval: async (change) => {
          if (!writers.approvals) return null;
          const held = await writers.approvals.hold(gate, change);
          if (held === null && context.approval) approved = change;
          return held;
        },
      });
      if (context.approval) {
        // An approval whose change never asked the gate would apply without settling its request: refused.
        if (!approved || !writers.approvals) throw new Error('an approval ran a change that is not approvable');
        const settled = await writers.approvals.settle(gate, approved, value);
        // The approval answers the settled change request, so that is what its Idempotency-Key stores, here.
        reported = { value: settled };
      }
      if (claim && writers.answer) {
        stored = claim.answerFor(reported ? reported.value : value) ?? undefined;
        if (stored) await writers.answer(tx, claim, stored);
      }
      return value;
    });
    if (claim && stored) claim.stored = stored;
    for (const hook of hooks) hook();
    return result;
  }

  return {
    /** A deadlock or serialization failure is retried WRITE_RETRIES times, then answers 503 server_busy, never 500. */
    async write(context, work) {
      for (let retry = 0; ; retry++) {
        try {
          return await attempt(context, work);
        } catch (err) {
          if (!isConflict(err)) throw err;
          if (retry === WRITE_RETRIES)
            throw new ServiceUnavailableError(
              'server_busy',
              'The change collided with concurrent changes of the same data several times; retry shortly.',
            );
          await sleep(RETRY_BASE_MS * 2 ** retry * (0.5 + Math.random()));
        }
      }
    },
    snapshot(work) {
      return db.transaction((tx) => work(bind(tx)), { isolationLevel: 'repeatable read', accessMode: 'read only' });
    },
  };
}
