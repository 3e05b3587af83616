/** Login, refresh rotation with reuse detection, logout (of one login or all), and bearer-token verification. */
import { randomUUID } from 'node:crypto';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../errors.js';
import { opaqueToken, sha256Hex } from '../../lib/secrets.js';
import { type ChangeContext, OPERATOR_CONTEXT, SYSTEM_CONTEXT } from '../../lib/change-context.js';
import { normaliseEmail } from '../../lib/email.js';
import { type AuditEvent, auditValues } from '../audit/audit-dal.js';
import type { AccessTokens, AuthMethod } from './access-tokens.js';
import { type AuthChangeHandlers, loginUnlockedNotice } from './auth-change-feed.js';
import type { AuthDal, ChallengeName, NewToken } from './auth-dal.js';
import type { CredentialsDal } from '../credentials/credentials-dal.js';
import { assertStrongPassword } from '../credentials/password-policy.js';
import { newRecoveryCodes, recoveryCodeHash, totpStep } from '../credentials/totp.js';
import { createSessionGuard, hasSecondFactor, mfaRequired, type SessionGuardDeps } from './session-guard.js';
import type { LoginThrottle } from './login-throttle.js';
import type { PasswordHasher } from '../credentials/password-hasher.js';
import type { Principal, Role, UserType } from '../../lib/principal.js';

export interface TokenObject {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
}

/** The DALs a change of logins writes through: its own, and the user's stored credentials (bound as `users`, whose DAL holds them). */
export interface AuthDals {
  auth: AuthDal;
  users: CredentialsDal;
}

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
  authDal: SessionGuardDeps['authDal'] &
    Pick<AuthDal, 'findLoginUser' | 'findChallenge' | 'findUserEmail' | 'openSession'>;
  hasher: PasswordHasher;
  throttle: LoginThrottle;
  accessTokens: AccessTokens;
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

/** Who a login belongs to: what its access tokens say. */
interface TokenOwner {
  id: string;
  type: UserType;
  customerId: string;
  email: string;
  role: Role;
}

const PASSWORD: AuthMethod[] = ['pwd'];
const PASSWORD_AND_CODE: AuthMethod[] = ['pwd', 'otp'];

const REFRESH_PREFIX = 'fgr_';
const CHALLENGE_PREFIX = 'fgc_';
const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** E-mails of token callers held in memory (they are not in the token); the oldest go first. */
const EMAIL_CACHE_SIZE = 50_000;

export function createAuthService(deps: AuthServiceDeps) {
  const { uow, authDal, hasher, accessTokens } = deps;
  const now = deps.now ?? (() => new Date());
  const guard = createSessionGuard(deps);
  const emails = new Map<string, string>();
  const rememberEmail = (userId: string, email: string) => {
    if (emails.size >= EMAIL_CACHE_SIZE && !emails.has(userId)) emails.delete(emails.keys().next().value!);
    emails.set(userId, email);
  };
  let unlisten: (() => Promise<void>) | undefined;

  /** When a login's refresh tokens stop, however often they were refreshed. */
  const sessionEnd = (openedAt: number) => openedAt + deps.sessionMaxAgeSeconds * 1000;

  /**
   * A new opaque refresh token of a login, the row that stores its hash, and its
   * lifetime in seconds. It ends with the login at the latest: `sessionEndsAt`,
   * or, for a new login, SESSION_MAX_AGE_SECONDS from now.
   */
  function newRefreshToken(
    sessionId: string,
    sessionEndsAt?: number,
  ): { token: string; row: NewToken; expiresIn: number } {
    const token = opaqueToken(REFRESH_PREFIX);
    const issuedAt = now().getTime();
    const expiresAt = Math.min(issuedAt + deps.refreshTokenTtlSeconds * 1000, sessionEndsAt ?? sessionEnd(issuedAt));
    return {
      token,
      row: { tokenHash: sha256Hex(token), sessionId, kind: 'refresh', expiresAt: new Date(expiresAt) },
      expiresIn: Math.floor((expiresAt - issuedAt) / 1000),
    };
  }

  /** The answer of a login or a refresh: a signed access token (JWT) beside the refresh token. */
  async function tokenObject(
    sessionId: string,
    owner: TokenOwner,
    amr: AuthMethod[],
    refresh: { token: string; expiresIn: number },
  ): Promise<TokenObject> {
    const access = await accessTokens.sign({
      sub: owner.id,
      sid: sessionId,
      user_type: owner.type,
      customer_id: owner.customerId,
      role: owner.role,
      amr,
    });
    rememberEmail(owner.id, owner.email);
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: deps.accessTokenTtlSeconds,
      refresh_token: refresh.token,
      refresh_expires_in: refresh.expiresIn,
    };
  }

  /**
   * A failed login is recorded without the caller waiting for it: awaiting the
   * write would make a wrong password for a real user answer later than one for
   * an unknown user (nothing to record), and tell the two apart. stop() waits
   * for what is still being written.
   */
  const backgroundWrites = new Set<Promise<void>>();
  function recordInBackground(context: ChangeContext, event: AuditEvent): void {
    const write = uow
      .write(context, ({ audit }) => audit(event))
      .catch((err) => deps.onBackgroundError?.(err, 'could not record a failed login in the audit trail'))
      .finally(() => backgroundWrites.delete(write));
    backgroundWrites.add(write);
  }

  /** Ends every login of a user, here at once and on other instances by NOTIFY; answers how many were live. */
  async function endSessions(user: { id: string; customerId: string }, context: ChangeContext): Promise<number> {
    return uow.write(context, async (scope) => {
      const ids = await guard.revokeUserSessionsIn(scope, user.id, 'logout_all');
      await scope.audit({
        action: 'auth.logout_all',
        customerId: user.customerId,
        targetType: 'user',
        targetId: user.id,
        details: { sessions: ids.length },
      });
      return ids.length;
    });
  }

  /** A new login of `user`, proven by `amr`: its session, refresh token and audit record in one statement, then its tokens. */
  async function openLogin(
    user: TokenOwner,
    amr: AuthMethod[],
    context: ChangeContext,
    address: string,
  ): Promise<TokenObject> {
    const sessionId = randomUUID();
    const refresh = newRefreshToken(sessionId);
    const audit = auditValues(
      { ...context, actor: { type: 'user', id: user.id } },
      {
        action: 'auth.login',
        customerId: user.customerId,
        targetType: 'auth_session',
        targetId: sessionId,
        details: { client_address: address },
      },
    );
    await authDal.openSession(user.id, amr, refresh.row, audit);
    return tokenObject(sessionId, user, amr, refresh);
  }

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
          recordInBackground(context, {
            action: 'auth.login_failed',
            customerId: user.customerId,
            targetType: 'user',
            targetId: user.id,
            details: { client_address: client.address },
          });
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
      return { token: await openLogin({ ...user, email: name, role: user.role! }, PASSWORD, context, client.address) };
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
        return { token: await openLogin(owner, PASSWORD, context, address) };
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
        recordInBackground(context, {
          action: 'auth.login_failed',
          customerId: owner.customerId,
          targetType: 'user',
          targetId: owner.id,
          details: { client_address: address, factor: 'totp' },
        });
        throw invalidChallenge('The code is not correct or was already used; log in again.');
      }
      await deps.throttle.succeed(pending.email, address);
      const token = await openLogin(owner, PASSWORD_AND_CODE, context, address);
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

    /** A failed check of a known user's password, written without the caller waiting (see recordInBackground). */
    recordFailure(context: ChangeContext, user: { id: string; customerId: string }, address: string): void {
      recordInBackground(context, {
        action: 'auth.login_failed',
        customerId: user.customerId,
        targetType: 'user',
        targetId: user.id,
        details: { client_address: address },
      });
    },

    /**
     * Rotates a refresh token, within SESSION_MAX_AGE_SECONDS of its login. A
     * second use of one revokes its whole family: `auth.refresh_reuse_detected`
     * of the user's customer, with the address it came from. A login made
     * without a one-time code is not renewed while its customer requires one.
     */
    async refresh(refreshToken: string, context: ChangeContext, clientAddress: string): Promise<TokenObject> {
      const tokenHash = sha256Hex(refreshToken);
      const outcome = await uow.write(context, async (scope) => {
        const { auth } = scope.dal;
        const token = await auth.lockRefreshToken(tokenHash);
        if (!token) return { error: 'invalid' as const };
        // Before revocation: turning require_mfa on ended the login, and this says why.
        if (token.requireMfa && !hasSecondFactor(token.amr)) return { error: 'mfa' as const };
        if (token.revokedAt !== null) return { error: 'invalid' as const };
        if (token.consumedAt !== null) {
          await guard.revokeSessionIn(scope, token.sessionId, 'refresh_token_reuse');
          await scope.audit(
            {
              action: 'auth.refresh_reuse_detected',
              customerId: token.customerId,
              targetType: 'auth_session',
              targetId: token.sessionId,
              details: { client_address: clientAddress },
            },
            { type: 'user', id: token.userId },
          );
          return { error: 'reused' as const };
        }
        const endsAt = sessionEnd(token.sessionCreatedAt.getTime());
        if (Math.min(token.expiresAt.getTime(), endsAt) <= now().getTime()) return { error: 'invalid' as const };
        await auth.consumeToken(tokenHash, now());
        const refresh = newRefreshToken(token.sessionId, endsAt);
        await auth.insertTokens([refresh.row]);
        const owner = {
          id: token.userId,
          type: token.userType,
          customerId: token.customerId,
          email: token.email,
          role: token.role!,
        };
        return { tokens: await tokenObject(token.sessionId, owner, token.amr, refresh) };
      });
      if ('tokens' in outcome && outcome.tokens) return outcome.tokens;
      if (outcome.error === 'mfa') throw mfaRequired('login');
      throw outcome.error === 'reused'
        ? new UnauthorizedError(
            'refresh_token_reused',
            'This refresh token was already used; the login has been revoked.',
          )
        : new UnauthorizedError('invalid_refresh_token', 'The refresh token is not valid.');
    },

    async logout(principal: Principal, context: ChangeContext): Promise<void> {
      if (principal.auth !== 'token' || !principal.sessionId) {
        throw new ForbiddenError(
          'forbidden',
          'Logout ends a token login; API keys are revoked with DELETE /v1/api-keys/{id}.',
        );
      }
      const sessionId = principal.sessionId;
      await uow.write(context, async (scope) => {
        await guard.revokeSessionIn(scope, sessionId, 'logout');
        await scope.audit({
          action: 'auth.logout',
          customerId: principal.customerId,
          targetType: 'auth_session',
          targetId: sessionId,
        });
      });
    },

    /** POST /v1/logout/all: ends every login of the caller's user, on every instance. */
    async logoutAll(principal: Principal, context: ChangeContext): Promise<void> {
      if (principal.auth !== 'token') {
        throw new ForbiddenError(
          'forbidden',
          'Logout ends token logins; API keys are revoked with DELETE /v1/api-keys/{id}.',
        );
      }
      await endSessions({ id: principal.userId, customerId: principal.customerId }, context);
    },

    /** `feegate users logout`: ends every login of the login user of an e-mail, on every instance; answers how many were live. */
    async logoutUser(email: string, context: ChangeContext): Promise<number> {
      const user = await authDal.findLoginUser(normaliseEmail(email));
      if (!user) throw new NotFoundError('user_not_found', 'No login user has this e-mail.');
      return endSessions(user, context);
    },

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

    /** Housekeeping: drops tokens that expired (sessions stay, for the audit trail). */
    async pruneExpiredTokens(): Promise<number> {
      return uow.write(SYSTEM_CONTEXT, ({ dal }) => dal.auth.deleteExpiredTokens(now()));
    },

    /**
     * The signature, issuer, type and expiry are checked in memory, and so are
     * revocation and require_mfa while the push channel is up: no database
     * read per request.
     */
    async authenticateAccessToken(token: string): Promise<Principal> {
      const claims = await accessTokens.verify(token);
      await guard.assertLive(claims);
      let email = emails.get(claims.sub);
      if (email === undefined) {
        email = await authDal.findUserEmail(claims.sub);
        if (email === undefined)
          throw new UnauthorizedError('invalid_token', 'The access token is not valid or has expired.');
        rememberEmail(claims.sub, email);
      }
      return {
        auth: 'token',
        userId: claims.sub,
        email,
        userType: claims.user_type,
        customerId: claims.customer_id,
        merchantId: null,
        sessionId: claims.sid,
        role: claims.role,
        apiKeyId: null,
      };
    },

    /**
     * The session of an MFA_SETUP challenge, sent as a bearer token: it stands
     * for its user on the two enrolment operations only (the plugin refuses it
     * elsewhere). Read from the database: it is rare, never a hot path.
     */
    async authenticateChallengeSession(session: string): Promise<Principal> {
      const pending = await authDal.findChallenge(sha256Hex(session), now(), false);
      if (pending?.name !== 'MFA_SETUP' || !pending.enabled) {
        throw new UnauthorizedError('invalid_token', 'The challenge session is not valid, was used or has expired.');
      }
      return {
        auth: 'token',
        userId: pending.userId,
        email: pending.email,
        userType: pending.type,
        customerId: pending.customerId,
        merchantId: null,
        sessionId: null,
        role: pending.role,
        apiKeyId: null,
      };
    },

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
      await Promise.all(backgroundWrites);
      await guard.setConnected(false);
      // The database may already be gone; there is nothing left to unsubscribe from then.
      await unlisten?.().catch(() => {});
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
