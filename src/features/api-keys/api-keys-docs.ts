/** What the OpenAPI document says of the API key operations; their HTTP is in api-keys-routes.ts. */
import { operationDocs } from '../../schemas/common.js';

/** Said once for every operation of this feature. */
const COMMON_ERRORS =
  ' Errors: 401 missing_credentials, invalid_token, invalid_api_key, api_key_expired; 429 rate_limited (a key with its own rate_limit; Retry-After and RateLimit-* headers).';
const WRITE_ERRORS = ' 403 read_only_key (a read_only key may use GET operations only).';
/** The rule of key_escalation, said where it applies (src/features/api-keys/key-grants.ts). */
const NO_LOOSER =
  ' A key is never given more than the calling key has: an expiry no later than its own, a rate limit no looser than its own (a limit no higher over a window no shorter), read_only if it is read_only, no permission it lacks, and only allowed_ips ranges inside one of its own (none, meaning any address, only if it has none). Token callers are not bound by this.';
const ESCALATION = ' 403 key_escalation (a key caller asking for more than it has);';

export const API_KEYS_DOCS = operationDocs('api-keys', {
  createSdkMerchantKey: {
    summary: "Create a merchant key (the platform SDK's path)",
    description:
      "POST /v1/api-keys for a MERCHANT key, as the platform's SDK asks for it: `{ user, user_type: MERCHANT, customer_id, merchant_id }`, also under /api. " +
      'The SDK sends `X-API-KEY` (a customer key) and `Authorization` (a customer token, with or without `Bearer`) together: here both may be present, and then both must be valid and of the same customer (else 401); the key is the caller. ' +
      "The answer is the platform's: `{ id, api_key, user, user_type, merchant_id, customer_id, create_date, update_date }`; the rules and errors are POST /v1/api-keys'.",
  },
  createApiKey: {
    summary: 'Create an API key',
    description:
      "Without merchant_id: a CUSTOMER key (customer callers only). With merchant_id: a MERCHANT key for a merchant of customer_id (merchant callers: their own merchant only). The e-mail names an integration user of customer_id: each customer has its own, so whether another customer uses an address never shows, and the e-mail of a login user may be used (the key goes to an integration user; the login stays as it was). Unknown e-mails become integration users of that type and merchant; a known one of another type or merchant is a 409 user_conflict. At most 10 ENABLED keys per user (EXPIRED and DELETED keys do not count). Optional: name (1..64 characters), expires_at (in the future, at most 5 years ahead), access (full, the default, or read_only), rate_limit ({limit 1..100000, window_seconds 1..86400}), permissions (default: all that access allows) and allowed_ips (up to 20 addresses or CIDR ranges; a bad one is a 400 naming the item). Created with a key, the new key takes the calling key's expires_at, access, rate_limit, permissions and allowed_ips where they are not sent, and may ask for less but not more." +
      NO_LOOSER +
      ' The full key is returned only here.' +
      ' Errors: 400 validation_failed (including expires_at in the past or more than 5 years ahead); 403 forbidden (merchant caller asking for a CUSTOMER key),' +
      ESCALATION +
      WRITE_ERRORS +
      ' 404 customer_not_found, merchant_not_found; 409 api_key_limit_reached, user_conflict.' +
      COMMON_ERRORS,
  },
  listApiKeys: {
    summary: 'List API keys',
    description:
      "Customer callers: the customer's CUSTOMER keys (or one merchant's keys with merchant_id). Merchant callers: their merchant's keys. status: ENABLED (default), DELETED or EXPIRED (an ENABLED key whose expires_at has passed), any case. Newest first; keys are masked." +
      ' Errors: 400 validation_failed; 404 merchant_not_found.' +
      COMMON_ERRORS,
  },
  updateApiKey: {
    summary: 'Rename an API key or change its expiry, rate limit, permissions or allowed addresses',
    description:
      'Changes any of name, expires_at and rate_limit (null removes each), permissions and allowed_ips (each replaces the list; a read_only key holds no :write, else 400 naming the item). A key changing itself may only drop permissions and narrow its ranges. Same visibility as DELETE: a key the caller may not see is a 404. Answers the masked record. The new expiry and rate limit reach every instance at once; the rate-limit count goes on.' +
      " With a key, an expiry or rate limit may be set within the calling key's own, or tightened on any key it may see: a key may shorten its own expiry and tighten its own rate limit, but never lengthen, loosen or remove them." +
      NO_LOOSER +
      ' Errors: 400 validation_failed (an empty body, expires_at in the past or more than 5 years ahead, a bad name or rate_limit);' +
      ESCALATION +
      WRITE_ERRORS +
      ' 404 api_key_not_found; 409 api_key_not_enabled (the key is DELETED, EXPIRED, or was rolled and is in its grace period).' +
      COMMON_ERRORS,
  },
  rollApiKey: {
    summary: 'Roll an API key: a new key, the old one retired after a grace period',
    description:
      "Creates a new key with the same user, type, customer, merchant, name, access, rate limit, expiry, permissions and allowed_ips, and answers it with its full value (shown only here). The new key continues the old one's rate-limit count. The old key's expires_at becomes now + grace_period_seconds (0..604800, default 0: refused at once; never later than its current expiry), and it can be neither changed nor rolled again. Allowed at the 10-key limit. Of two rolls of one key at once, one wins and the other is a 409. Same visibility as DELETE. A key caller may roll itself, and other keys that have no more than it has." +
      NO_LOOSER +
      ' Errors: 400 validation_failed (grace_period_seconds outside 0..604800);' +
      ESCALATION +
      WRITE_ERRORS +
      ' 404 api_key_not_found; 409 api_key_not_enabled (the key is DELETED, EXPIRED or already rolled).' +
      COMMON_ERRORS,
  },
  deleteApiKey: {
    summary: 'Delete (revoke) an API key',
    description:
      'The key becomes DELETED and is refused at once by every instance. Deleting a deleted key is again 204. Errors: 400 validation_failed;' +
      WRITE_ERRORS +
      ' 404 api_key_not_found.' +
      COMMON_ERRORS,
  },
});
