/** Who a bearer token stands for: an access token (checked in memory) or the session of an MFA_SETUP challenge. */
import { UnauthorizedError } from '../../errors.js';
import type { Principal } from '../../lib/principal.js';
import { sha256Hex } from '../../lib/secrets.js';
import type { AccessTokens } from './access-tokens.js';
import type { AuthDal } from './auth-dal.js';
import type { LoginTokens } from './login-tokens.js';
import type { SessionGuard } from './session-guard.js';

export interface BearerAuthenticationDeps {
  authDal: Pick<AuthDal, 'findUserEmail' | 'findChallenge'>;
  accessTokens: AccessTokens;
  guard: SessionGuard;
  tokens: LoginTokens;
  now: () => Date;
}

export function createBearerAuthentication(deps: BearerAuthenticationDeps) {
  const { authDal, accessTokens, guard, tokens, now } = deps;
  return {
    /**
     * The signature, issuer, type and expiry are checked in memory, and so are
     * revocation and require_mfa while the push channel is up: no database
     * read per request.
     */
    async authenticateAccessToken(token: string): Promise<Principal> {
      const claims = await accessTokens.verify(token);
      await guard.assertLive(claims);
      let email = tokens.knownEmail(claims.sub);
      if (email === undefined) {
        email = await authDal.findUserEmail(claims.sub);
        if (email === undefined)
          throw new UnauthorizedError('invalid_token', 'The access token is not valid or has expired.');
        tokens.rememberEmail(claims.sub, email);
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
  };
}
