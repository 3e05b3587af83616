/**
 * Every error code the service can answer, with its status and the detail a
 * person reads when the place that raises it has nothing more precise to say.
 * The error classes (src/errors.ts) take their status, title and default detail
 * from here, so a code cannot be raised with another status; routes list the
 * codes they answer (`problems(...)`, src/schemas/problems.ts), and the OpenAPI
 * document's examples and docs/api.md's table of codes are checked against it
 * (test/platform/error-catalogue.test.ts).
 *
 * `scope` says where a code is answered; without one, by the operations that
 * list it:
 * - `any-request`: before or around any operation (routing, the HTTP parser, a
 *   body that cannot be read): the document says so once, in its description;
 * - `command-line`: only the operator's command line tells it (src/cli-errors.ts);
 * - `unread`: the client hung up, nobody reads the answer; it only stops work.
 */

/** The title of a problem: the reason phrase of its status (as Node writes it, but 413's of RFC 9110). */
const TITLES = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
} as const;

type Status = keyof typeof TITLES;
type Scope = 'any-request' | 'command-line' | 'unread';

interface Entry {
  status: Status;
  detail: string;
  scope?: Scope;
}

const CATALOGUE = {
  validation_failed: { status: 400, detail: 'The request is not valid.' },
  malformed_json: { status: 400, detail: 'The body is not valid JSON.' },
  ambiguous_credentials: {
    status: 400,
    detail: 'Send either Authorization or X-Api-Key, not both.',
    scope: 'any-request',
  },
  merchant_id_required: { status: 400, detail: 'The is_selected filter needs merchant_id: selection is per merchant.' },
  merchant_ids_required: {
    status: 400,
    detail:
      'merchant_ids must name at least one merchant; POST /v1/fee-rules/bulk-assign/all assigns to every merchant.',
  },
  invalid_time_range: { status: 400, detail: 'from must not be after to.' },
  invalid_tax_identification: {
    status: 400,
    detail: "tax_identification is not a valid CUIT (ARG) or RFC (MEX) for the merchant's country.",
  },
  webhook_url_not_allowed: {
    status: 400,
    detail:
      'notification_url must be https:// (http:// only where allowed) and name a public host: loopback, private, link-local and similar addresses are refused.',
  },
  malformed_url: { status: 400, detail: 'The path is not valid percent-encoded UTF-8.', scope: 'any-request' },
  malformed_request: { status: 400, detail: 'The request is not valid HTTP/1.1.', scope: 'any-request' },
  bad_request: { status: 400, detail: 'The request could not be processed.', scope: 'any-request' },
  weak_password: {
    status: 400,
    detail: 'The password is too easy to guess: use 12 to 256 characters that are not a common password or the e-mail.',
  },
  invalid_code: { status: 400, detail: 'The code is not correct, was already used or has expired.' },
  invalid_idempotency_key: {
    status: 400,
    detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters.',
  },

  missing_credentials: { status: 401, detail: 'Send Authorization: Bearer <access_token> or X-Api-Key: <key>.' },
  invalid_token: { status: 401, detail: 'The access token is not valid or has expired.' },
  invalid_api_key: { status: 401, detail: 'The API key is not valid.' },
  api_key_expired: { status: 401, detail: 'The API key has expired.' },
  invalid_credentials: { status: 401, detail: 'The user or password is not correct.' },
  invalid_refresh_token: { status: 401, detail: 'The refresh token is not valid.' },
  refresh_token_reused: { status: 401, detail: 'This refresh token was already used; the login has been revoked.' },
  mfa_required: {
    status: 401,
    detail:
      'Your organisation requires two-factor codes and this login was made without one: log in again (and set them up).',
  },
  invalid_challenge: {
    status: 401,
    detail:
      'The challenge session is not valid, was already used or has expired, or its answer is wrong; log in again.',
  },

  forbidden: { status: 403, detail: 'This kind of caller may not use this operation.' },
  insufficient_role: {
    status: 403,
    detail: 'Your role may not do this: a VIEWER only reads, and only an ADMIN login manages users.',
  },
  self_approval: {
    status: 403,
    detail:
      'A change request is approved or rejected by another ADMIN than the one who asked for it, directly or through an API key they made, rolled or hold.',
  },
  not_requester: { status: 403, detail: 'Only the caller who asked for a change request may cancel it.' },
  insufficient_permissions: {
    status: 403,
    detail: 'This API key lacks the permission this operation needs (required_permission).',
  },
  ip_not_allowed: { status: 403, detail: 'This API key may not be used from this address.' },
  read_only_key: { status: 403, detail: 'This API key is read-only: it may use GET operations only.' },
  key_escalation: {
    status: 403,
    detail: 'An API key cannot grant more than it has: ask for no more than the calling key has, or use a login.',
  },
  merchant_inactive: {
    status: 403,
    detail: "This API key's merchant is INACTIVE; its keys work again once the customer makes it ACTIVE.",
  },

  not_found: { status: 404, detail: 'No such route.', scope: 'any-request' },
  api_key_not_found: { status: 404, detail: 'No such API key.' },
  merchant_not_found: { status: 404, detail: 'No merchant with this merchant_id.' },
  customer_not_found: { status: 404, detail: 'The customer does not exist.' },
  payment_plan_not_found: { status: 404, detail: "No payment plan of the caller's customer has this id." },
  change_request_not_found: { status: 404, detail: "No change request of the caller's customer has this id." },
  scheduled_change_not_found: { status: 404, detail: "No scheduled change of the caller's customer has this id." },
  user_not_found: { status: 404, detail: 'No such user.' },
  webhook_not_found: { status: 404, detail: 'No such webhook subscription.' },
  webhook_delivery_not_found: { status: 404, detail: 'This webhook subscription has no such delivery.' },

  method_not_allowed: {
    status: 405,
    detail: 'This path does not accept this method; Allow lists those it does.',
    scope: 'any-request',
  },
  request_timeout: { status: 408, detail: 'The request did not fully arrive in time.', scope: 'any-request' },

  change_request_closed: {
    status: 409,
    detail: 'This change request is no longer PENDING: it was already decided, cancelled or expired.',
  },
  preview_changed: {
    status: 409,
    detail: 'What the change would do is no longer the preview you approved: review current_preview and approve again.',
  },
  api_key_not_enabled: { status: 409, detail: 'Only ENABLED API keys that were not rolled can be changed or rolled.' },
  user_conflict: {
    status: 409,
    detail: "This e-mail already names one of this customer's integration users, of another type or merchant.",
  },
  last_admin: {
    status: 409,
    detail: 'This is the last enabled ADMIN of the customer: make another user ADMIN first.',
  },
  mfa_already_enabled: { status: 409, detail: 'Two-factor codes are already on; turn them off first.' },
  api_key_limit_reached: {
    status: 409,
    detail: 'This user holds as many enabled API keys as allowed; delete one first.',
  },
  merchant_code_conflict: {
    status: 409,
    detail: 'Another merchant of this customer already has this merchant_code.',
  },
  webhook_limit_reached: {
    status: 409,
    detail: 'This customer has 20 webhook subscriptions, the most allowed; delete one first.',
  },
  payment_plan_exists: {
    status: 409,
    detail: 'An ACTIVE plan of this customer has the same six fields; its id is in payment_plan_id.',
  },
  scheduled_change_not_pending: {
    status: 409,
    detail: 'Only a PENDING scheduled change can be cancelled; this one was already applied.',
  },
  idempotency_key_in_use: {
    status: 409,
    detail: 'A request with this Idempotency-Key is still being processed; retry after Retry-After seconds.',
  },
  idempotency_answer_unreadable: {
    status: 409,
    detail:
      'The request with this Idempotency-Key was processed, but its kept answer no longer reads (the operator is told); it is not processed again: see what it did, and use a fresh key for a new attempt.',
  },

  payload_too_large: { status: 413, detail: 'The body is larger than the limit.' },
  uri_too_long: { status: 414, detail: 'A path segment is longer than 100 characters.', scope: 'any-request' },
  unsupported_media_type: { status: 415, detail: 'Send the body as application/json.' },

  unknown_payment_plans: { status: 422, detail: 'Some payment plans do not exist for this customer.' },
  unknown_merchants: { status: 422, detail: 'Some merchants do not exist for this customer.' },
  inactive_merchants: { status: 422, detail: 'Some merchants are INACTIVE and get no new payment plans.' },
  retired_payment_plans: {
    status: 422,
    detail: 'Some payment plans are retired and can no longer be assigned.',
  },
  idempotency_key_reused: {
    status: 422,
    detail:
      'This Idempotency-Key was used for a different request (method, path, query or body) within 24 hours; use a fresh key.',
  },
  conflicting_payment_plans: {
    status: 422,
    detail:
      'Some payment plans share card_brand, payment_method, is_international, has_installments and term: a merchant can hold only one of each.',
  },

  too_many_login_attempts: {
    status: 429,
    detail:
      'Too many failed logins for this user name from this address, or from all addresses; retry after Retry-After seconds.',
  },
  rate_limited: { status: 429, detail: 'Too many requests; retry after the number of seconds in Retry-After.' },

  request_header_fields_too_large: {
    status: 431,
    detail: 'The request headers are larger than the limit.',
    scope: 'any-request',
  },
  client_closed_request: {
    status: 499,
    detail: 'The client closed the connection before the answer was ready.',
    scope: 'unread',
  },

  internal_error: { status: 500, detail: 'An unexpected error occurred. Quote the request_id when reporting it.' },
  database_unavailable: { status: 503, detail: 'The database is unavailable; retry shortly.' },
  server_busy: { status: 503, detail: 'Too many requests of this kind are waiting; retry shortly.' },
} as const satisfies Record<string, Entry>;

type Catalogue = typeof CATALOGUE;
export type ErrorCode = keyof Catalogue;
/** The codes of one status: an error class takes only those (a 409 class refuses a 404's code). */
export type CodeOf<S extends Status> = { [C in ErrorCode]: Catalogue[C]['status'] extends S ? C : never }[ErrorCode];
/** The codes an operation answers and lists in its `problems(...)`. */
export type OperationCode = { [C in ErrorCode]: Catalogue[C] extends { scope: Scope } ? never : C }[ErrorCode];
/** The statuses of those codes. */
export type OperationStatus = Catalogue[OperationCode]['status'];

export interface CatalogueEntry {
  code: ErrorCode;
  status: Status;
  title: string;
  detail: string;
  scope: Scope | 'operation';
}

/** The entry of a code, its title made from its status. */
export function errorEntry(code: ErrorCode): CatalogueEntry {
  const entry: Entry = CATALOGUE[code];
  return {
    code,
    status: entry.status,
    title: TITLES[entry.status],
    detail: entry.detail,
    scope: entry.scope ?? 'operation',
  };
}

/** Every entry, in the order of the table. */
export function catalogue(): CatalogueEntry[] {
  return (Object.keys(CATALOGUE) as ErrorCode[]).map(errorEntry);
}
