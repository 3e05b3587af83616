/** The tokens a login is answered with: a signed access token beside an opaque refresh token, and their owners' e-mails. */
import { opaqueToken, sha256Hex } from '../../lib/secrets.js';
import type { Role, UserType } from '../../lib/principal.js';
import type { AccessTokens, AuthMethod } from './access-tokens.js';
import type { NewToken } from './auth-dal.js';

export interface TokenObject {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  refresh_expires_in: number;
}

/** Who a login belongs to: what its access tokens say. */
export interface TokenOwner {
  id: string;
  type: UserType;
  customerId: string;
  email: string;
  role: Role;
}

export interface LoginTokensDeps {
  accessTokens: AccessTokens;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** A login's refresh tokens live at most this long from the login, however often they are refreshed. */
  sessionMaxAgeSeconds: number;
  now: () => Date;
}

const REFRESH_PREFIX = 'fgr_';
/** E-mails of token callers held in memory (they are not in the token); the oldest go first. */
const EMAIL_CACHE_SIZE = 50_000;

export function createLoginTokens(deps: LoginTokensDeps) {
  const { accessTokens, now } = deps;
  const emails = new Map<string, string>();
  const rememberEmail = (userId: string, email: string) => {
    if (emails.size >= EMAIL_CACHE_SIZE && !emails.has(userId)) emails.delete(emails.keys().next().value!);
    emails.set(userId, email);
  };

  /** When a login's refresh tokens stop, however often they were refreshed. */
  const sessionEnd = (openedAt: number) => openedAt + deps.sessionMaxAgeSeconds * 1000;

  return {
    sessionEnd,

    /** The e-mail of a user that had tokens made here, if still held. */
    knownEmail: (userId: string): string | undefined => emails.get(userId),

    rememberEmail,

    /**
     * A new opaque refresh token of a login, the row that stores its hash, and its
     * lifetime in seconds. It ends with the login at the latest: `sessionEndsAt`,
     * or, for a new login, SESSION_MAX_AGE_SECONDS from now.
     */
    newRefreshToken(sessionId: string, sessionEndsAt?: number): { token: string; row: NewToken; expiresIn: number } {
      const token = opaqueToken(REFRESH_PREFIX);
      const issuedAt = now().getTime();
      const expiresAt = Math.min(issuedAt + deps.refreshTokenTtlSeconds * 1000, sessionEndsAt ?? sessionEnd(issuedAt));
      return {
        token,
        row: { tokenHash: sha256Hex(token), sessionId, kind: 'refresh', expiresAt: new Date(expiresAt) },
        expiresIn: Math.floor((expiresAt - issuedAt) / 1000),
      };
    },

    /** The answer of a login or a refresh: a signed access token (JWT) beside the refresh token. */
    async tokenObject(
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
    },
  };
}

export type LoginTokens = ReturnType<typeof createLoginTokens>;
