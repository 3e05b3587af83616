/**
 * What ends a login and what refuses its access tokens, known on every instance
 * without a database read per request: the revoked logins (revoked-sessions.ts)
 * and the customers that require a one-time code (mfa-requirements.ts), both
 * changed inside a unit of work, pushed by NOTIFY (auth-change-feed.ts) and
 * read from the database while the push channel is down.
 */
import type { WriteScope } from '../../db/unit-of-work.js';
import { UnauthorizedError } from '../../errors.js';
import type { AccessClaims } from './access-tokens.js';
import { mfaRequirementNotice, sessionsRevokedNotice } from './auth-change-feed.js';
import type { AuthDal } from './auth-dal.js';
import { createMfaRequirements } from './mfa-requirements.js';
import { createRevokedSessions } from './revoked-sessions.js';

/** The part of a unit of work that ends logins. */
export type RevokingScope = Pick<WriteScope<{ auth: AuthDal }>, 'dal' | 'notify' | 'afterCommit'>;

export interface SessionGuardDeps {
  authDal: Pick<
    AuthDal,
    'listRevokedSessionIds' | 'isSessionRevoked' | 'listCustomersRequiringMfa' | 'customerRequiresMfa'
  >;
  accessTokenTtlSeconds: number;
  onBackgroundError?(err: unknown, what: string): void;
}

const invalidToken = () => new UnauthorizedError('invalid_token', 'The access token is not valid or has expired.');

/** A login made without a one-time code, of a customer that requires one. */
export const mfaRequired = (what: string) =>
  new UnauthorizedError(
    'mfa_required',
    `Your organisation requires two-factor codes and this ${what} was made without one: log in again.`,
  );

export const hasSecondFactor = (amr: readonly string[]) => amr.includes('otp');

export function createSessionGuard(deps: SessionGuardDeps) {
  const { authDal } = deps;
  const revokedSessions = createRevokedSessions({
    ttlMs: deps.accessTokenTtlSeconds * 1000,
    loadRevokedSince: (since) => authDal.listRevokedSessionIds(since),
    isRevokedInDatabase: (sessionId) => authDal.isSessionRevoked(sessionId),
    onReloadError: (err) =>
      deps.onBackgroundError?.(err, 'could not load revoked logins; checking each token in the database'),
  });
  const mfaRequirements = createMfaRequirements({
    loadRequiring: () => authDal.listCustomersRequiringMfa(),
    requiresInDatabase: (customerId) => authDal.customerRequiresMfa(customerId),
    onReloadError: (err) =>
      deps.onBackgroundError?.(err, 'could not load which customers require two-factor codes; asking the database'),
  });

  /** Ends logins by id: refused here once committed, and on other instances by the notice. */
  async function revoked({ notify, afterCommit }: RevokingScope, ids: string[]): Promise<string[]> {
    if (ids.length > 0) await notify(sessionsRevokedNotice(ids));
    afterCommit(() => {
      for (const id of ids) revokedSessions.add(id);
    });
    return ids;
  }

  return {
    /** Inside a unit of work: ends every login of a user but `keep`, on every instance; answers their ids. */
    async revokeUserSessionsIn(scope: RevokingScope, userId: string, reason: string, keep?: string) {
      return revoked(scope, await scope.dal.auth.revokeUserSessions(userId, reason, keep));
    },

    /** Inside a unit of work: ends one login (logout, refresh-token reuse), on every instance. */
    async revokeSessionIn(scope: RevokingScope, sessionId: string, reason: string): Promise<void> {
      await scope.dal.auth.revokeSession(sessionId, reason);
      await revoked(scope, [sessionId]);
    },

    /**
     * Inside a unit of work: a customer's require_mfa, known on every instance.
     * Turned on, it ends the customer's logins made without a one-time code;
     * answers their ids.
     */
    async setRequireMfaIn(scope: RevokingScope, customerId: string, required: boolean): Promise<string[]> {
      const ids = required ? await scope.dal.auth.revokeSessionsWithoutOtp(customerId, 'mfa_required') : [];
      await scope.notify(mfaRequirementNotice(customerId, required));
      scope.afterCommit(() => mfaRequirements.changed(customerId, required));
      return revoked(scope, ids);
    },

    /**
     * Refuses the token of a login without a one-time code while its customer
     * requires one (mfa_required, before revocation: the reason the login ended
     * says what to do), then a revoked login's (invalid_token). Memory only
     * while the push channel is up.
     */
    async assertLive(claims: Pick<AccessClaims, 'sid' | 'customer_id' | 'amr'>): Promise<void> {
      if (!hasSecondFactor(claims.amr) && (await mfaRequirements.requires(claims.customer_id)))
        throw mfaRequired('access token');
      if (await revokedSessions.isRevoked(claims.sid)) throw invalidToken();
    },

    /** What the pushed notices change here. */
    sessionRevoked: (sessionId: string) => revokedSessions.add(sessionId),
    mfaRequirementChanged: (customerId: string, required: boolean) => mfaRequirements.changed(customerId, required),
    setConnected(connected: boolean): Promise<void> {
      return Promise.all([revokedSessions.setConnected(connected), mfaRequirements.setConnected(connected)]).then(
        () => {},
      );
    },
    ready(): Promise<void> {
      return Promise.all([revokedSessions.ready(), mfaRequirements.ready()]).then(() => {});
    },
  };
}

export type SessionGuard = ReturnType<typeof createSessionGuard>;
