/** What the OpenAPI document says of the auth operations; their HTTP is in auth-routes.ts. */
import { operationDocs } from '../../schemas/common.js';

export const AUTH_DOCS = operationDocs('auth', {
  login: {
    summary: 'Log in with user and password',
    description:
      'Only CUSTOMER users with a password can log in. Every failure is the same 401 invalid_credentials. Failed logins are counted per user name and client address: after 10 within 15 minutes that pair gets 429 too_many_login_attempts with Retry-After; per user name from all addresses the limit is 100 within 15 minutes, so guesses from one address never lock the owner out elsewhere. Each attempt is counted before its password is checked, so parallel guesses never check more than the limit; a successful login clears the count of its address; the counts are shared by every instance with REDIS_URL. A wrong password of a login user is recorded as auth.login_failed, a login as auth.login, in the audit trail of its customer. Per client address: 429 rate_limited beyond RATE_LIMIT_ANONYMOUS_PER_MINUTE (default 60), with Retry-After and RateLimit-* headers. When too many logins wait for password hashing: 503 server_busy with Retry-After; a waiting login whose client hangs up leaves the queue unhashed.',
  },
  respondToChallenge: {
    summary: 'Answer a login challenge',
    description:
      'A login answers `{ challenge: { name, session } }` instead of a token when it needs one more step: NEW_PASSWORD_REQUIRED (a temporary password; send `new_password`, 12..256 characters, not a common password nor the e-mail, else 400 weak_password and the session stays good), SOFTWARE_TOKEN_MFA (two-factor codes are on; send the 6-digit `code`, or a recovery code in its place, each good once) or MFA_SETUP (the customer requires two-factor codes and the user has none: enrol with POST /v1/users/me/mfa/totp using the session as the bearer token, then send the first `code` here; the answer then carries the 10 `recovery_codes`, shown once). A session is good for one answer, within 5 minutes, for its user only: a wrong, spent or expired one, or a wrong code, is 401 invalid_challenge and the login must be made again. Each code answer counts as a login attempt of the user name and address (429 too_many_login_attempts beyond the limit), and a wrong code as a failed login. The answer to the last step is the usual token. Per client address: 429 rate_limited beyond RATE_LIMIT_ANONYMOUS_PER_MINUTE.',
  },
  refreshToken: {
    summary: 'Exchange a refresh token for a new token object',
    description:
      'Refresh tokens rotate: each is good once. Presenting a used one is a 401 `refresh_token_reused` and revokes the whole login (its access tokens are refused at once by every instance). Unknown, expired or revoked: 401 `invalid_refresh_token`. The refresh tokens of a login live at most SESSION_MAX_AGE_SECONDS (default 30 days) from the login, however often they are refreshed: `refresh_expires_in` never reaches past that, and after it the login must be made again. While the customer requires two-factor codes (`require_mfa`), a login made without one is not renewed: 401 `mfa_required` (log in again). A detected reuse is recorded as auth.refresh_reuse_detected in the audit trail of the customer. Per client address: 429 rate_limited beyond RATE_LIMIT_ANONYMOUS_PER_MINUTE (default 60), with Retry-After and RateLimit-* headers.',
  },
  logout: {
    summary: 'Revoke the access token and its refresh family',
    description:
      'Every access and refresh token of this login stops working at once, on every instance. With an API key: 403 `forbidden` (keys are revoked with DELETE /v1/api-keys/{id}).',
  },
  logoutEverywhere: {
    summary: "End every login of the caller's user",
    description:
      "Every access and refresh token of every login of this user (this one included) stops working, on every instance: log out everywhere, e.g. after a device was lost. Recorded as auth.logout_all in the customer's audit trail. With an API key: 403 `forbidden` (keys are revoked with DELETE /v1/api-keys/{id}).",
  },
  getJsonWebKeySet: {
    summary: 'Public keys that verify access tokens',
    description:
      'The public keys (JWK Set, RFC 7517) of every signing key that can still verify a live access token: the key that signs now, and a rotated one until the tokens it signed have expired. No private material. Cacheable for 5 minutes; a verifier that meets an unknown kid fetches it again. Unknown query parameters are a 400.',
  },
  getCurrentUser: {
    summary: 'The authenticated caller',
    description: 'Who the credentials belong to, and whether they are a token or an API key.',
  },
});
