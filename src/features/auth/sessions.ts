/** A login's life after it is proven: opened, renewed by refresh rotation with reuse detection, ended. */
import { randomUUID } from 'node:crypto';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../errors.js';
import { type ChangeContext, SYSTEM_CONTEXT } from '../../lib/change-context.js';
import { normaliseEmail } from '../../lib/email.js';
import type { Principal } from '../../lib/principal.js';
import { sha256Hex } from '../../lib/secrets.js';
import { auditValues } from '../audit/audit-dal.js';
import type { AuthMethod } from './access-tokens.js';
import type { AuthDal, AuthDals } from './auth-dal.js';
import type { LoginTokens, TokenObject, TokenOwner } from './login-tokens.js';
import { hasSecondFactor, mfaRequired, type SessionGuard } from './session-guard.js';

export interface SessionsDeps {
  uow: UnitOfWork<AuthDals>;
  /** The login user of an e-mail, and the login's one statement (a sanctioned write, docs/design.md). */
  authDal: Pick<AuthDal, 'findLoginUser' | 'openSession'>;
  guard: SessionGuard;
  tokens: LoginTokens;
  now: () => Date;
  /** Whether a customer's subscriptions ask for its audit records as AUDIT_RECORD events. */
  auditRecordsWanted(customerId: string): Promise<boolean>;
}

export function createSessions(deps: SessionsDeps) {
  const { uow, authDal, guard, tokens, now, auditRecordsWanted } = deps;

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

  return {
    /**
     * A new login of `user`, proven by `amr`: its session, refresh token and audit record in one statement,
     * then its tokens. A customer that takes its audit records as events gets the write path's transaction
     * instead, whose audit writer sends the record as an AUDIT_RECORD event with it.
     */
    async open(user: TokenOwner, amr: AuthMethod[], context: ChangeContext, address: string): Promise<TokenObject> {
      const sessionId = randomUUID();
      const refresh = tokens.newRefreshToken(sessionId);
      // Not the request's change (a login stores no answer for an Idempotency-Key): its request and user only.
      const login: ChangeContext = { requestId: context.requestId, actor: { type: 'user', id: user.id } };
      const event = {
        action: 'auth.login',
        customerId: user.customerId,
        targetType: 'auth_session',
        targetId: sessionId,
        details: { client_address: address },
      };
      if (await auditRecordsWanted(user.customerId))
        await uow.write(login, async ({ dal, audit }) => {
          await dal.auth.insertSession(sessionId, user.id, amr);
          await dal.auth.insertTokens([refresh.row]);
          await audit(event);
        });
      else await authDal.openSession(user.id, amr, refresh.row, auditValues(login, event));
      return tokens.tokenObject(sessionId, user, amr, refresh);
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
        const endsAt = tokens.sessionEnd(token.sessionCreatedAt.getTime());
        if (Math.min(token.expiresAt.getTime(), endsAt) <= now().getTime()) return { error: 'invalid' as const };
        await auth.consumeToken(tokenHash, now());
        const refresh = tokens.newRefreshToken(token.sessionId, endsAt);
        await auth.insertTokens([refresh.row]);
        const owner = {
          id: token.userId,
          type: token.userType,
          customerId: token.customerId,
          email: token.email,
          role: token.role!,
        };
        return { tokens: await tokens.tokenObject(token.sessionId, owner, token.amr, refresh) };
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

    /** Housekeeping: drops tokens that expired (sessions stay, for the audit trail). */
    async pruneExpiredTokens(): Promise<number> {
      return uow.write(SYSTEM_CONTEXT, ({ dal }) => dal.auth.deleteExpiredTokens(now()));
    },
  };
}
