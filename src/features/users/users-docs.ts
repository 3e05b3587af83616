/** What the OpenAPI document says of the user operations; their HTTP is in users-routes.ts. */
import { operationDocs } from '../../schemas/common.js';
import { REFUSAL_FLOOR_MS, WAITING_CHECKS_PER_NAME, WRONG_CODES_PER_HOUR } from './password-resets.js';

const ADMIN_ONLY =
  'Only the access token of an ADMIN may do this: another role, and any API key, gets 403 insufficient_role.';

export const USERS_DOCS = operationDocs('users', {
  listUsers: {
    summary: "List the customer's users",
    description:
      "The customer's login users (scope LOGIN, with a role) and integration users (scope API_KEY, that hold API keys), newest first, in the platform's shape. Every role and customer keys may read it; merchant keys get 403 forbidden. `email` filters exactly, in any letter case.",
  },
  createUser: {
    summary: 'Add a login user',
    description: `A login user of the caller's customer, role MEMBER unless given, in status FORCE_CHANGE_PASSWORD: \`temporary_password\` is shown only in this answer and must be replaced at the first login (challenge NEW_PASSWORD_REQUIRED). With SMTP_URL set it is also mailed to the address, from a durable outbox: the answer never waits for the mail server, and a mail it refused is retried. An e-mail that already names a login user: 409 user_conflict. Recorded as user.created and emitted as USER_CREATED. The body may be the platform's CreateUserRequest instead, \`{ user_type: CUSTOMER, attributes: { email, customer_id, name? } }\`: \`customer_id\` must be the caller's (else 404 customer_not_found), and \`user_type: MERCHANT\` is a 400 (merchant users act through API keys: POST /v1/api-keys with merchant_id). ${ADMIN_ONLY}`,
  },
  updateUser: {
    summary: 'Change a user',
    description: `Name, description, role and enabled. A change of role, or \`enabled: false\`, ends every session of the user at once on every instance; a disabled login user cannot log in (its logins fail exactly as a wrong password does). A user of another customer is 404 user_not_found, as one that does not exist. \`enabled: false\` on an integration user refuses all its API keys at once (401 invalid_api_key) until it is enabled again. The last enabled ADMIN of a customer can be neither demoted nor disabled: 409 last_admin. An integration user has no role (409 user_conflict). A disable and a re-enable void the user's pending challenge sessions and reset code. \`enabled: false, revoke_keys: true\` also revokes every ENABLED API key the user created (its \`created_by\`), and the keys those keys created, as DELETE /v1/api-keys/{id} does: api_key.deleted and API_KEY_REVOKED each, refused at once on every instance (\`revoke_keys\` works without a disable too); recorded in user.updated as \`revoked_keys\`, the count. Recorded as user.updated, user.disabled or user.enabled, emitted as USER_UPDATED. ${ADMIN_ONLY}`,
  },
  resetUserPassword: {
    summary: "Reset a login user's password",
    description: `A new temporary password: status FORCE_CHANGE_PASSWORD, every session ended on every instance, pending challenge sessions and reset code voided, two-factor codes turned off. With SMTP_URL set the user is mailed a notice with the password; for a user that had two-factor codes it is then only mailed (\`temporary_password: null, delivered_by: email\`), so an ADMIN's token never yields a login without the user's second factor. Otherwise the answer carries it (\`delivered_by: response\`). Integration users have no password: 404 user_not_found, as a user of another customer or none. Recorded as user.password_reset. ${ADMIN_ONLY}`,
  },
  changeOwnPassword: {
    summary: 'Change your own password',
    description:
      "Any login user's access token, whatever its role. A wrong current_password is 401 invalid_credentials and counts as a failed login of the user name and address (429 too_many_login_attempts beyond the limit, so parallel guesses never get more). The new password, normalised with NFKC (as at login): 12..256 characters (invisible ones not counted), not only spaces or invisible characters, not in zxcvbn's list of common passwords nor too easy to guess (its first 100 characters are measured), not containing the e-mail (400 weak_password and the reason). Every other session of the user ends; this one goes on. With an API key: 403 forbidden.",
  },
  forgotPassword: {
    summary: 'Ask for a password reset code',
    description:
      'Always 202 with no body, at once, whether the user exists, is disabled, is an integration user or not: the look-up happens after the answer. For an enabled login user, with SMTP_URL set, a 6-digit code good for 15 minutes and 5 attempts is mailed (a new request replaces it), at most 3 mails per user in any hour: beyond, nothing is sent and the live code stays. Without SMTP_URL nothing is sent: the operator resets the password (`feegate users reset-password`).',
  },
  confirmForgotPassword: {
    summary: 'Set a new password with the mailed code',
    description: `The code is checked before anything about the password: a wrong, spent or expired code, or an unknown, disabled or integration user, is the same 400 invalid_code, never sooner than ${REFUSAL_FLOOR_MS} ms after its check began, the checks of one name one at a time, whoever was named; beyond ${WAITING_CHECKS_PER_NAME} checks of one name running or waiting on an instance, 429 rate_limited with Retry-After at once. At most ${WRONG_CODES_PER_HOUR} wrong codes per user in any hour, across all its codes (a new code does not restart the count, every instance shares it): beyond, every code, the right one too, is invalid_code until the hour has passed. The new password follows the rule of POST /v1/users/me/password (400 weak_password; the code stays good). Success ends every session of the user on every instance; two-factor codes stay on.`,
  },
  startTotp: {
    summary: 'Start two-factor codes (TOTP)',
    description:
      "A step-up: the body carries the caller's `current_password` (also with the session of an MFA_SETUP challenge); a missing or wrong one is 401 invalid_credentials and counts as a failed login (429 too_many_login_attempts beyond the limit). Then a new secret and its otpauth:// URL (RFC 6238: SHA-1, 6 digits, 30 seconds), not yet active: POST /v1/users/me/mfa/totp/verify with a first code turns it on. Already on: 409 mfa_already_enabled. With an API key: 403 forbidden.",
  },
  verifyTotp: {
    summary: 'Turn two-factor codes on',
    description:
      "The first code of the secret from POST /v1/users/me/mfa/totp turns TOTP on; the answer carries 10 single-use recovery codes, shown only here. Every other session of the user ends at once on every instance (the caller's own goes on). A wrong code is 400 invalid_code and counts as a failed login. From then on a login answers the challenge SOFTWARE_TOKEN_MFA. Recorded as user.mfa_enabled.",
  },
  disableTotp: {
    summary: 'Turn two-factor codes off',
    description:
      "A step-up: the body carries the caller's `current_password` (missing or wrong: 401 invalid_credentials, counted as a failed login) and a current code or a recovery code (each good once; a wrong one is 400 invalid_code and counts as a failed login). Every other session of the user ends at once on every instance (the caller's own goes on). Recorded as user.mfa_disabled.",
  },
  getCustomer: {
    summary: "The caller's customer",
    description:
      'Its id, name, whether it requires two-factor codes of every login, and its approval policy of fee changes (approval_policy.fee_changes, NONE unless set).',
  },
  updateCustomer: {
    summary: "Change the caller's customer",
    description:
      "`require_mfa: true`: a login of a user without two-factor codes then answers the challenge MFA_SETUP; every session of the customer's users made without a two-factor code ends at once on every instance (the caller's own too, when it was made without one), and while it holds, such access tokens and refresh tokens are refused with 401 mfa_required. API keys are not affected. " +
      '`approval_policy: { fee_changes: "REQUIRED" }`: from then on every fee change of the customer (bulk assignment, /all, a merchant\'s fee rules, scheduling or cancelling a scheduled change, creating or retiring a plan), by a token or a key, is answered 202 with a change request that another ADMIN approves (GET /v1/change-requests); `NONE` (the default): they apply at once, and requests already held stay held. ' +
      'Fields left out stay as they are. Recorded as customer.updated. Only the access token of an ADMIN: otherwise 403 insufficient_role.',
  },
});
