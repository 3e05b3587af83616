/**
 * The forgotten password (docs/api.md, "Forgotten password"): a code by mail,
 * then a new password with it. Guessing is bounded per user across every code
 * (10 wrong codes an hour, counted in PostgreSQL for every instance), and so are
 * the mails (3 an hour). Every refusal of a code looks the same, whoever was
 * named: the checks of one name run one at a time, each refusal taking at least
 * REFUSAL_FLOOR_MS.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { UnitOfWork, WriteScope } from '../../db/unit-of-work.js';
import { BadRequestError, RateLimitedError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { sha256Hex } from '../../lib/secrets.js';
import { normaliseEmail } from '../../lib/email.js';
import type { AuthService } from '../auth/auth-service.js';
import type { PasswordHasher } from '../credentials/password-hasher.js';
import type { Mail } from '../mail/mail-dal.js';
import { forgotPasswordMail } from '../mail/mail-messages.js';
import { assertStrongPassword } from '../credentials/password-policy.js';
import { auditUser } from './user-audit.js';
import type { UsersDal } from './users-dal.js';
import type { UsersDals } from './users-service.js';

const RESET_CODE_TTL_MS = 15 * 60 * 1000;
/** Attempts at one code; the user's hourly budget below bounds all codes together. */
const RESET_CODE_ATTEMPTS = 5;
export const WRONG_CODES_PER_HOUR = 10;
export const RESET_MAILS_PER_HOUR = 3;
/**
 * The least time a refused code's check takes. A known user's guess is a
 * transaction (the budget spent, the code compared) and an unknown name's a hash
 * in memory: a few milliseconds apart, which about twenty timed requests told
 * apart. Both now wait out the same floor, far above what the transaction takes
 * unless the database is in trouble; and since a known user's guesses queue on its
 * budget's row, every name's checks take their turn (inTurn), so a burst of
 * guesses is answered at the same pace whoever it names.
 */
export const REFUSAL_FLOOR_MS = 200;

export interface PasswordResetsDeps {
  uow: UnitOfWork<UsersDals>;
  usersDal: Pick<UsersDal, 'findLoginUser'>;
  auth: Pick<AuthService, 'revokeSessionsIn'>;
  hasher: Pick<PasswordHasher, 'hash'>;
  mailEnabled: boolean;
  /** Writes a mail in the unit of work that asks for it. */
  queueMail(scope: WriteScope<UsersDals>, mail: Mail): Promise<void>;
  now(): Date;
  onBackgroundError?(err: unknown, what: string): void;
}

/** The stored form of a user's reset code. */
const resetCodeHash = (userId: string, code: string) => sha256Hex(`${userId}:${code}`);

/** What an unknown name's code is hashed with: the same work as a known user's, never a match. */
const NO_USER = '00000000-0000-4000-8000-000000000000';

const invalidCode = () => new BadRequestError('invalid_code');

/**
 * Checks of one name that may run or wait on an instance at once: beyond, a 429, so
 * that a flood of guesses naming someone holds neither memory nor sockets for
 * minutes (20 take their turns in about 4 s).
 */
export const WAITING_CHECKS_PER_NAME = 20;

/**
 * Runs `check` once every earlier check of `name` on this instance has settled: a
 * queue per name, held only while a check runs or waits, and never longer than
 * WAITING_CHECKS_PER_NAME.
 */
function createTurns() {
  const queues = new Map<string, { last: Promise<unknown>; size: number }>();
  return function inTurn<T>(name: string, check: () => Promise<T>): Promise<T> {
    const queue = queues.get(name) ?? { last: Promise.resolve(), size: 0 };
    if (queue.size >= WAITING_CHECKS_PER_NAME)
      return Promise.reject(new RateLimitedError(Math.ceil((queue.size * REFUSAL_FLOOR_MS) / 1000)));
    queue.size++;
    const mine = queue.last.then(check, check);
    const settled = mine.then(
      () => void queue.size--,
      () => void queue.size--,
    );
    queue.last = settled;
    queues.set(name, queue);
    void settled.then(() => queue.last === settled && queues.delete(name));
    return mine;
  };
}

/** The refusal of a code, once REFUSAL_FLOOR_MS have passed since `started` (performance.now()). */
async function refusedAfterFloor(started: number): Promise<never> {
  const left = started + REFUSAL_FLOOR_MS - performance.now();
  if (left > 0) await sleep(Math.ceil(left));
  throw invalidCode();
}

export function createPasswordResets(deps: PasswordResetsDeps) {
  const { uow, usersDal, auth, hasher, now } = deps;
  const backgroundWork = new Set<Promise<void>>();
  const inTurn = createTurns();

  /**
   * One guess at the user's live code: spent from the hour's budget first (two
   * at once wait for each other on the budget's row), given back when right.
   */
  function checkCode(userId: string, code: string, context: ChangeContext): Promise<boolean> {
    return uow.write(context, async ({ dal }) => {
      if (!(await dal.resetLimits.takeGuess(userId, WRONG_CODES_PER_HOUR))) return false;
      // The stored code is a keyed hash (docs/design.md, "Secrets at rest"): the DAL compares.
      const live = await dal.users.spendResetAttempt(userId, resetCodeHash(userId, code));
      const right = live !== undefined && live.attempts <= RESET_CODE_ATTEMPTS && live.matches;
      if (right) await dal.resetLimits.returnGuess(userId);
      return right;
    });
  }

  return {
    /**
     * POST /v1/login/forgot-password: the same answer at once whoever is named;
     * the look-up, the code and the mail happen after it, in the background. A
     * fourth mail within the hour is not sent, and the live code stays.
     */
    forgotPassword(user: string, context: ChangeContext): void {
      const work = (async () => {
        const row = await usersDal.findLoginUser(normaliseEmail(user));
        if (!row?.enabled || !deps.mailEnabled) return;
        const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
        await uow.write({ ...context, actor: { type: 'anonymous', id: null } }, async (scope) => {
          if (!(await scope.dal.resetLimits.takeMail(row.id, RESET_MAILS_PER_HOUR))) return;
          await scope.dal.users.putResetCode(
            row.id,
            resetCodeHash(row.id, code),
            new Date(now().getTime() + RESET_CODE_TTL_MS),
          );
          await scope.audit(auditUser('user.password_reset_requested', row));
          await deps.queueMail(scope, forgotPasswordMail(row.email, code));
        });
      })()
        .catch((err) => deps.onBackgroundError?.(err, 'could not handle a forgotten password'))
        .finally(() => backgroundWork.delete(work));
      backgroundWork.add(work);
    },

    /**
     * POST /v1/login/confirm-forgot-password: the code is checked before
     * anything about the password, and an unknown, disabled or integration user
     * is refused exactly as a wrong code is. A forgotten password never turns
     * two-factor codes off.
     */
    async confirmForgotPassword(
      input: { user: string; code: string; new_password: string },
      context: ChangeContext,
    ): Promise<void> {
      const name = normaliseEmail(input.user);
      const row = await inTurn(name, async () => {
        const started = performance.now();
        const found = await usersDal.findLoginUser(name);
        if (!found?.enabled) {
          // The hash a known user's code costs (resetCodeHash), then the same refusal.
          resetCodeHash(NO_USER, input.code);
          return refusedAfterFloor(started);
        }
        if (!(await checkCode(found.id, input.code, context))) return refusedAfterFloor(started);
        return found;
      });
      await assertStrongPassword(input.new_password, row.email);
      const hash = await hasher.hash(input.new_password);
      await uow.write({ ...context, actor: { type: 'user', id: row.id } }, async (scope) => {
        // Spent meanwhile (used twice at once, or voided by an ADMIN): refused like any spent code.
        const live = await scope.dal.users.lockResetCode(row.id, resetCodeHash(row.id, input.code));
        if (!live?.matches) throw invalidCode();
        await scope.dal.users.deleteResetCode(row.id);
        await scope.dal.users.setPassword(row.id, hash, false);
        await scope.dal.auth.voidChallenges(row.id);
        await auth.revokeSessionsIn(scope, row.id, 'password_reset');
        await scope.audit(auditUser('user.password_changed', row, { via: 'forgot_password' }));
      });
    },

    async stop(): Promise<void> {
      await Promise.all(backgroundWork);
    },
  };
}
