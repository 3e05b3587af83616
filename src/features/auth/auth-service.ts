/** Login, refresh rotation with reuse detection, logout, and bearer-token verification. */
import type { Db } from '../../db/database.js';
import { ForbiddenError, UnauthorizedError } from '../../errors.js';
import { opaqueToken, sha256Hex } from '../../lib/secrets.js';
import { type ChangeContext, recordAudit } from '../audit/audit-dal.js';
import type { AuthDal } from './auth-dal.js';
import type { LoginThrottle } from './login-throttle.js';
import type { PasswordHasher } from './password-hasher.js';
import type { Principal } from './principal.js';

export interface TokenObject {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
}

export interface AuthServiceDeps {
  db: Db;
  authDal: AuthDal;
  hasher: PasswordHasher;
  throttle: LoginThrottle;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  now?: () => Date;
}

const ACCESS_PREFIX = 'fga_';
const REFRESH_PREFIX = 'fgr_';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function createAuthService(deps: AuthServiceDeps) {
  const { db, authDal, hasher } = deps;
  const now = deps.now ?? (() => new Date());

  async function issueTokens(sessionId: string, tx: Db): Promise<TokenObject> {
    const issuedAt = now().getTime();
    const access = opaqueToken(ACCESS_PREFIX);
    const refresh = opaqueToken(REFRESH_PREFIX);
    await authDal.insertTokens(
      [
        { tokenHash: sha256Hex(access), sessionId, kind: 'access', expiresAt: new Date(issuedAt + deps.accessTokenTtlSeconds * 1000) },
        { tokenHash: sha256Hex(refresh), sessionId, kind: 'refresh', expiresAt: new Date(issuedAt + deps.refreshTokenTtlSeconds * 1000) },
      ],
      tx,
    );
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: deps.accessTokenTtlSeconds,
      refresh_token: refresh,
      refresh_expires_in: deps.refreshTokenTtlSeconds,
    };
  }

  const invalidCredentials = () => new UnauthorizedError('invalid_credentials', 'The user or password is not correct.');

  return {
    /** Refuses a login at once when the hashing queue is full (before its body is even read). */
    assertLoginCapacity(): void {
      hasher.assertCapacity();
    },

    /**
     * Same answer and the same hashing work for every kind of failure. `clientGone`
     * aborts when the caller stops waiting: a queued login is then dropped unhashed.
     */
    async login(credentials: { user: string; password: string }, context: ChangeContext, clientGone?: AbortSignal): Promise<TokenObject> {
      const name = normaliseEmail(credentials.user);
      deps.throttle.check(name);
      const user = await authDal.findUserByEmail(name);
      const canLogIn = user?.type === 'CUSTOMER' && user.passwordHash !== null;
      const passwordOk = await hasher.verify(canLogIn ? user.passwordHash : null, credentials.password, clientGone);
      if (!user || !canLogIn || !passwordOk) {
        deps.throttle.fail(name);
        throw invalidCredentials();
      }
      deps.throttle.succeed(name);
      return db.transaction(async (tx) => {
        const sessionId = await authDal.createSession(user.id, tx);
        await recordAudit(tx, { ...context, actor: { type: 'user', id: user.id } }, {
          action: 'auth.login',
          customerId: null,
          targetType: 'auth_session',
          targetId: sessionId,
        });
        return issueTokens(sessionId, tx);
      });
    },

    /** Rotates a refresh token. A second use of one revokes its whole family. */
    async refresh(refreshToken: string, context: ChangeContext): Promise<TokenObject> {
      const tokenHash = sha256Hex(refreshToken);
      const outcome = await db.transaction(async (tx) => {
        const token = await authDal.lockRefreshToken(tokenHash, tx);
        if (!token || token.revokedAt !== null) return { error: 'invalid' as const };
        if (token.consumedAt !== null) {
          await authDal.revokeSession(token.sessionId, 'refresh_token_reuse', tx);
          await recordAudit(tx, { ...context, actor: { type: 'user', id: token.userId } }, {
            action: 'auth.refresh_reuse_detected',
            customerId: null,
            targetType: 'auth_session',
            targetId: token.sessionId,
          });
          return { error: 'reused' as const };
        }
        if (token.expiresAt.getTime() <= now().getTime()) return { error: 'invalid' as const };
        await authDal.consumeToken(tokenHash, now(), tx);
        return { tokens: await issueTokens(token.sessionId, tx) };
      });
      if ('tokens' in outcome && outcome.tokens) return outcome.tokens;
      throw outcome.error === 'reused'
        ? new UnauthorizedError('refresh_token_reused', 'This refresh token was already used; the login has been revoked.')
        : new UnauthorizedError('invalid_refresh_token', 'The refresh token is not valid.');
    },

    async logout(principal: Principal, context: ChangeContext): Promise<void> {
      if (principal.auth !== 'token' || !principal.sessionId) {
        throw new ForbiddenError('Logout ends a token login; API keys are revoked with DELETE /v1/api-keys/{id}.');
      }
      await db.transaction(async (tx) => {
        await authDal.revokeSession(principal.sessionId!, 'logout', tx);
        await recordAudit(tx, context, {
          action: 'auth.logout',
          customerId: principal.customerId,
          targetType: 'auth_session',
          targetId: principal.sessionId,
        });
      });
    },

    /** Housekeeping: drops tokens that expired (sessions stay, for the audit trail). */
    async pruneExpiredTokens(): Promise<number> {
      return authDal.deleteExpiredTokens(now());
    },

    async authenticateAccessToken(token: string): Promise<Principal> {
      const principal = await authDal.findPrincipalByAccessToken(sha256Hex(token), now());
      if (!principal) throw new UnauthorizedError('invalid_token', 'The access token is not valid or has expired.');
      return principal;
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
