/** The problem-details responses of an operation, made from the codes it can answer (src/error-catalogue.ts). */
import { Type, type TSchema } from '@sinclair/typebox';
import { errorEntry, type OperationCode, type OperationStatus } from '../error-catalogue.js';

/** What each status of an operation means, whatever its code. */
const STATUS_TEXT: Record<OperationStatus, string> = {
  400: 'Malformed JSON, schema violation, bad query parameter, or both credential headers',
  401: 'Missing, malformed, unknown, expired or revoked credentials',
  403: 'Authenticated, but this kind of caller may not use the operation',
  404: 'Unknown route, or a resource the caller may not see',
  409: 'Conflict with the current state',
  413: 'Body larger than the configured limit',
  415: 'Body that is not application/json',
  422: 'Well-formed but refers to unknown or conflicting resources',
  429: 'Rate limited; see Retry-After',
  500: 'Unexpected failure (no internals are disclosed)',
  503: 'Database unavailable or server busy; see Retry-After',
};

const seconds = (description: string) => ({ type: 'integer', minimum: 0, description });
/** Headers of a rate-limited answer (docs/key-lifecycle.md#rate-limits-and-redis). */
const RATE_LIMIT_HEADERS = {
  'Retry-After': seconds('Seconds until a retry can succeed'),
  'RateLimit-Limit': seconds('Requests allowed in the window'),
  'RateLimit-Remaining': seconds('Requests left in the window (0)'),
  'RateLimit-Reset': seconds('Seconds until the window ends'),
};

/**
 * Problem-details responses: `problems(...AUTHENTICATED, 'merchant_not_found', ...ALWAYS)`
 * lists every code the operation can answer; each goes under its status from
 * the catalogue (src/error-catalogue.ts), in the order named. The codes become
 * the enum of `code` in that response and one example each (src/plugins/openapi.ts).
 */
export function problems(...codes: OperationCode[]): Record<number, TSchema> {
  const byStatus = new Map<OperationStatus, Set<OperationCode>>();
  for (const code of codes) {
    const status = errorEntry(code).status as OperationStatus;
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code));
  }
  const out: Record<number, TSchema> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const listed = [...byStatus.get(status)!];
    out[status] = {
      description: `${STATUS_TEXT[status]}. code: ${listed.join(', ')}`,
      ...(status === 429 ? { headers: RATE_LIMIT_HEADERS } : {}),
      content: {
        'application/problem+json': {
          schema: {
            allOf: [Type.Ref('Problem'), { type: 'object', properties: { code: { type: 'string', enum: listed } } }],
          },
        },
      },
    } as unknown as TSchema;
  }
  return out;
}

/** Codes any operation can answer, whatever it does. */
export const ALWAYS: OperationCode[] = ['internal_error', 'database_unavailable'];
/**
 * Codes of an operation whose method carries a body (POST, PATCH, DELETE): one
 * sent is read even where none is taken, and may be too large, not JSON, or broken.
 */
export const READS_BODY: OperationCode[] = ['malformed_json', 'payload_too_large', 'unsupported_media_type'];
/** Codes of an operation that takes a JSON body. */
export const WITH_BODY: OperationCode[] = ['validation_failed', ...READS_BODY];
/**
 * Codes of an authenticated operation (403: a key used from outside its
 * allowed_ips, or lacking the operation's permission; 429: a key with its own rate limit).
 */
export const AUTHENTICATED: OperationCode[] = [
  'validation_failed',
  'missing_credentials',
  'invalid_token',
  'mfa_required',
  'invalid_api_key',
  'api_key_expired',
  'merchant_inactive',
  'ip_not_allowed',
  'insufficient_permissions',
  'rate_limited',
];
/**
 * Codes of an authenticated operation that changes something (a read_only key and a
 * VIEWER may only GET; a change that keeps losing a deadlock or serialization race
 * after its retries is 503 server_busy, docs/design.md "One write path").
 */
export const AUTHENTICATED_WRITE: OperationCode[] = [
  ...AUTHENTICATED,
  'read_only_key',
  'insufficient_role',
  'server_busy',
];
