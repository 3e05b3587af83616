/**
 * Login with its challenges, and the auth service as one: the sessions
 * (sessions.ts), bearer tokens (bearer-authentication.ts) and failed logins
 * (failed-logins.ts) it composes.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { UnauthorizedError } from '../../errors.js';
import { opaqueToken, sha256Hex } from '../../lib/secrets.js';
import { type ChangeContext, OPERATOR_CONTEXT } from '../../lib/change-context.js';
import { normaliseEmail } from '../../lib/email.js';
import type { AccessTokens, AuthMethod } from './access-tokens.js';
import { type AuthChangeHandlers, loginUnlockedNotice } from './auth-change-feed.js';
import type { AuthDal, AuthDals, ChallengeName } from './auth-dal.js';
import { type BearerAuthenticationDeps, createBearerAuthentication } from './bearer-authentication.js';
import { assertStrongPassword } from '../credentials/password-policy.js';
import { newRecoveryCodes, recoveryCodeHash, totpStep } from '../credentials/totp.js';
import { createFailedLogins } from './failed-logins.js';
import { createLoginTokens, type TokenObject, type TokenOwner } from './login-tokens.js';
import { createSessionGuard, type SessionGuardDeps } from './session-guard.js';
import { createSessions, type SessionsDeps } from './sessions.js';
import type { LoginThrottle } from './login-throttle.js';
import type { PasswordHasher } from '../credentials/password-hasher.js';

/** A login that needs one more step: its name and opaque session (docs/api.md, "Challenges"). */
export interface Challenge {
  name: ChallengeName;
  session: string;
}

/** What a login or a challenge answers: the tokens, or the next challenge. */
export type LoginAnswer = { token: TokenObject; recovery_codes?: string[] } | { challenge: Challenge };

/** The answer to a challenge (POST /v1/login/challenge). */
export interface ChallengeAnswer {
  name: ChallengeName;
  session: string;
  new_password?: string | undefined;
  code?: string | undefined;
}

export interface AuthServiceDeps {
  uow: UnitOfWork<AuthDals>;
  /** Reads on the pool, and the login's one statement (a sanctioned write, docs/design.md). */
  authDal: SessionGuardDeps['authDal'] & SessionsDeps['authDal'] & BearerAuthenticationDeps['authDal'];
  hasher: PasswordHasher;
  throttle: LoginThrottle;
  accessTokens: AccessTokens;
  auditRecordsWanted: SessionsDeps['auditRecordsWanted'];
  /** Subscribes to revocations and key rotations pushed by every instance. */
  listen(handlers: AuthChangeHandlers): Promise<() => Promise<void>>;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** A login's refresh tokens live at most this long from the login, however often they are refreshed. */
  sessionMaxAgeSeconds: number;
  now?: () => Date;
  onBackgroundError?(err: unknown, what: string): void;
}

/** Where a login comes from: the client's address (counted and audited) and whether it still waits for the answer. */
export interface LoginClient {
  address: string;
  /** Aborts when the caller stops waiting: a queued login is then dropped unhashed. */
  gone?: AbortSignal;
}

const PASSWORD: AuthMethod[] = ['pwd'];
const PASSWORD_AND_CODE: AuthMethod[] = ['pwd', 'otp'];

const CHALLENGE_PREFIX = 'fgc_';
const CHALLENGE_TTL_MS = 5 * 60 * 1000;

export function createAuthService(deps: AuthServiceDeps) {
  const { uow, authDal, hasher, accessTokens } = deps;
  const now = deps.now ?? (() => new Date());
  const guard = createSessionGuard(deps);
  const tokens = createLoginTokens({ ...deps, now });
  const sessions = createSessions({ uow, authDal, guard, tokens, now, auditRecordsWanted: deps.auditRecordsWanted });
  const failedLogins = createFailedLogins(deps);
  const bearer = createBearerAuthentication({ authDal, accessTokens, guard, tokens, now });
  let unlisten: (() => Promise<void>) | undefined;

  /** A challenge instead of tokens: its session is good once, for 5 minutes. */
  async function challenge(name: ChallengeName, userId: string, context: ChangeContext): Promise<LoginAnswer> {
    const session = opaqueToken(CHALLENGE_PREFIX);
    await uow.write(context, ({ dal }) =>
      dal.auth.insertChallenge({
        sessionHash: sha256Hex(session),
        userId,
        name,
        expiresAt: new Date(now().getTime() + CHALLENGE_TTL_MS),
      }),
    );
    return { challenge: { name, session } };
  }

  /** The second factor a login of this user still needs, if any. */
  const secondFactor = (user: { totpEnabled: boolean; requireMfa: boolean }): ChallengeName | null =>
    user.totpEnabled ? 'SOFTWARE_TOKEN_MFA' : user.requireMfa ? 'MFA_SETUP' : null;

  const invalidChallenge = (detail?: string) => new UnauthorizedError('invalid_challenge', detail);

  const invalidCredentials = () => new UnauthorizedError('invalid_credentials', 'The user or password is not correct.');

  return {
    /** Refuses a login at once when the hashing queue is full (before its body is even read). */
    assertLoginCapacity(): void {
      hasher.assertCapacity();
    },

    /**
     * Same answer and the same hashing work for every kind of failure. A wrong
     * password of a login user is an `auth.login_failed` event of its customer.
     */
    async login(
      credentials: { user: string; password: string },
      context: ChangeContext,
      client: LoginClient,
    ): Promise<LoginAnswer> {
      const name = normaliseEmail(credentials.user);
      await deps.throttle.attempt(name, client.address);
      let user: Awaited<ReturnType<AuthDal['findLoginUser']>>;
      // A disabled user is verified against the dummy hash, like an unknown one: same answer, same time.
      const storedHash = async () => {
        user = await authDal.findLoginUser(name);
        return user?.type === 'CUSTOMER' && user.enabled ? user.passwordHash : null;
      };
      const passwordOk = await hasher.verify(storedHash, credentials.password, client.gone).catch(async (err) => {
        await deps.throttle.release(name, client.address);
        throw err;
      });
      if (!user || !passwordOk) {
        if (user) {
          failedLogins.record(context, user, client.address);
        }
        throw invalidCredentials();
      }
      if (user.mustChangePassword) {
        await deps.throttle.succeed(name, client.address);
        return challenge('NEW_PASSWORD_REQUIRED', user.id, context);
      }
      // The address's count of failures is cleared only once the second factor passes too.
      const factor = secondFactor(user);
      if (factor) return challenge(factor, user.id, context);
      await deps.throttle.succeed(name, client.address);
      return {
        token: await sessions.open({ ...user, email: name, role: user.role! }, PASSWORD, context, client.address),
      };
    },

    /**
     * POST /v1/login/challenge. The session is spent by any answer, right or
     * wrong; a wrong code counts as a failed login of the user name and address.
     */
    async respondToChallenge(answer: ChallengeAnswer, context: ChangeContext, address: string): Promise<LoginAnswer> {
      const sessionHash = sha256Hex(answer.session);
      const pending = await authDal.findChallenge(sessionHash, now(), false);
      if (!pending || pending.name !== answer.name || !pending.enabled) throw invalidChallenge();
      const owner: TokenOwner = {
        id: pending.userId,
        type: pending.type,
        customerId: pending.customerId,
        email: pending.email,
        role: pending.role!,
      };
      if (answer.name === 'NEW_PASSWORD_REQUIRED') {
        if (answer.new_password === undefined) throw invalidChallenge('NEW_PASSWORD_REQUIRED needs new_password.');
        // Checked before the session is spent: a refused password may be chosen again.
        await assertStrongPassword(answer.new_password, pending.email);
        const hash = await hasher.hash(answer.new_password);
        const spent = await uow.write(context, async (scope) => {
          if (!(await scope.dal.auth.findChallenge(sessionHash, now(), true))) return false;
          await scope.dal.auth.spendChallenge(sessionHash);
          await scope.dal.users.setPassword(owner.id, hash, false);
          await scope.audit(
            { action: 'user.password_changed', customerId: owner.customerId, targetType: 'user', targetId: owner.id },
            { type: 'user', id: owner.id },
          );
          return true;
        });
        if (!spent) throw invalidChallenge();
        if (pending.requireMfa && !pending.totpEnabled) return challenge('MFA_SETUP', owner.id, context);
        return { token: await sessions.open(owner, PASSWORD, context, address) };
      }
      if (answer.code === undefined) throw invalidChallenge(`${answer.name} needs code.`);
      await deps.throttle.attempt(pending.email, address);
      const code = answer.code;
      const outcome = await uow.write(context, async (scope) => {
        const { dal, audit } = scope;
        const locked = await dal.auth.findChallenge(sessionHash, now(), true);
        if (!locked) return 'spent' as const;
        await dal.auth.spendChallenge(sessionHash);
        const step = locked.totpSecret === null ? null : totpStep(locked.totpSecret, code, now().getTime());
        const accepted =
          (step !== null && (await dal.users.acceptTotpStep(owner.id, step))) ||
          (locked.totpEnabled && (await dal.users.useRecoveryCode(owner.id, recoveryCodeHash(code))));
        if (!accepted) return 'wrong' as const;
        if (locked.totpEnabled) return { recoveryCodes: undefined };
        // MFA_SETUP answered with the first code of the pending secret: now active.
        const recoveryCodes = newRecoveryCodes();
        await dal.users.setTotpEnabled(owner.id, true);
        await dal.users.replaceRecoveryCodes(owner.id, recoveryCodes.map(recoveryCodeHash));
        // Turning TOTP on ends every login of the user; the one opened below is the only one.
        await guard.revokeUserSessionsIn(scope, owner.id, 'mfa_enabled');
        await audit(
          { action: 'user.mfa_enabled', customerId: owner.customerId, targetType: 'user', targetId: owner.id },
          { type: 'user', id: owner.id },
        );
        return { recoveryCodes };
      });
      if (outcome === 'spent') throw invalidChallenge();
      if (outcome === 'wrong') {
        failedLogins.record(context, owner, address, 'totp');
        throw invalidChallenge('The code is not correct or was already used; log in again.');
      }
      await deps.throttle.succeed(pending.email, address);
      const token = await sessions.open(owner, PASSWORD_AND_CODE, context, address);
      return outcome.recoveryCodes ? { token, recovery_codes: outcome.recoveryCodes } : { token };
    },

    /** Inside another feature's unit of work: ends a user's logins but `keep`, on every instance. */
    revokeSessionsIn: guard.revokeUserSessionsIn,

    /** Inside another feature's unit of work: a customer's require_mfa, known on every instance (session-guard.ts). */
    setRequireMfaIn: guard.setRequireMfaIn,

    /** Counts a failed check of a user's password or code toward the login lockout (before it is checked). */
    countAttempt(email: string, address: string): Promise<void> {
      return deps.throttle.attempt(normaliseEmail(email), address);
    },

    /** A check that passed: the address's failures are forgotten. */
    countSuccess(email: string, address: string): Promise<void> {
      return deps.throttle.succeed(normaliseEmail(email), address);
    },

    /** A failed check of a known user's password, written without the caller waiting (failed-logins.ts). */
    recordFailure(context: ChangeContext, user: { id: string; customerId: string }, address: string): void {
      failedLogins.record(context, user, address);
    },

    refresh: sessions.refresh,
    logout: sessions.logout,
    logoutAll: sessions.logoutAll,
    logoutUser: sessions.logoutUser,
    pruneExpiredTokens: sessions.pruneExpiredTokens,

    /**
     * `feegate users unlock`: clears a user name's failed-login counts on every
     * running instance, here and in Redis (told first, so that instances forget
     * theirs even when Redis cannot be reached and this throws).
     */
    async unlock(email: string): Promise<void> {
      const name = normaliseEmail(email);
      await uow.write(OPERATOR_CONTEXT, ({ notify }) => notify(loginUnlockedNotice(name)));
      await deps.throttle.unlock(name);
    },

    authenticateAccessToken: bearer.authenticateAccessToken,
    authenticateChallengeSession: bearer.authenticateChallengeSession,

    /** Adds a signing key that signs from now on (feegate signing-keys rotate); answers its kid. */
    rotateSigningKey(): Promise<string> {
      return accessTokens.rotate();
    },

    /** The public keys that verify live access tokens (GET /.well-known/jwks.json). */
    jwks() {
      return accessTokens.jwks();
    },

    /** Loads the signing keys (making the first) and the revoked logins, then listens for changes. */
    async start(): Promise<void> {
      await accessTokens.start();
      unlisten = await deps.listen({
        sessionRevoked: guard.sessionRevoked,
        mfaRequirementChanged: guard.mfaRequirementChanged,
        loginUnlocked: (name) => deps.throttle.forgetLocally(name),
        signingKeysChanged: () => {
          accessTokens.reload().catch((err) => deps.onBackgroundError?.(err, 'could not reload signing keys'));
        },
        connectedChanged: (connected) => {
          void guard.setConnected(connected);
        },
      });
      await guard.ready();
    },

    async stop(): Promise<void> {
      await failedLogins.settled();
      await guard.setConnected(false);
      // The database may already be gone; there is nothing left to unsubscribe from then.
      await unlisten?.().catch(() => {});
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
