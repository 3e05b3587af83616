/**
 * What the OpenAPI document says of Idempotency-Key (src/plugins/idempotency.ts):
 * every POST and PATCH takes the header; an operation with a caller answers its
 * three codes and marks replays with `Idempotent-Replayed`, a public one (a
 * login) checks the key and keeps nothing, having no caller to scope it to.
 */
import { type ErrorCode, errorEntry } from '../error-catalogue.js';

// biome-ignore lint/suspicious/noExplicitAny: the generated OpenAPI document is walked as untyped JSON.
type Json = Record<string, any>;

const KEPT =
  'Any 1 to 255 printable ASCII characters, fresh for each change (a UUID): a retry with the same key and the same request (method, path, query, body) within 24 hours gets the first answer again, byte for byte, with `Idempotent-Replayed: true`, and changes nothing. Scoped to the caller and the operation. The same key with a different request is a 422 `idempotency_key_reused`; while the first is still being processed, a 409 `idempotency_key_in_use` with `Retry-After: 1`; when its kept answer no longer reads (tampered), a 409 `idempotency_answer_unreadable`, never the request again. 5xx and 429 answers are not kept: a retry runs again.';
const NOT_KEPT =
  '1 to 255 printable ASCII characters, checked but not kept: this operation has no caller to scope a key to, so a retry runs again.';

const parameter = (description: string) => ({
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[ -~]+$' },
});

const RETRY_AFTER = { description: 'Seconds to wait before retrying (1)', schema: { type: 'integer' } };
const REPLAYED = {
  description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key',
  schema: { type: 'string', enum: ['true'] },
};

/** Adds `code` to the operation's problem answer of its status, made like its 500's when it has none. */
function addProblemCode(responses: Record<string, Json>, code: ErrorCode): void {
  const { status, title } = errorEntry(code);
  const problem = (at: number) => responses[at]?.content?.['application/problem+json']?.schema?.allOf;
  const allOf = problem(status);
  if (allOf) {
    allOf[1].properties.code.enum = [...allOf[1].properties.code.enum, code];
    responses[status]!.description += `, ${code}`;
  } else {
    const codeOnly = { type: 'object', properties: { code: { type: 'string', enum: [code] } } };
    responses[status] = {
      description: `${title}. code: ${code}`,
      content: { 'application/problem+json': { schema: { allOf: [problem(500)![0], codeOnly] } } },
    };
  }
  if (status === 409) responses[status]!.headers = { ...responses[status]!.headers, 'Retry-After': RETRY_AFTER };
}

/** Declares the header on a POST or PATCH operation, before its security is filled in (none: public). */
export function declareIdempotencyKey(operation: Json): void {
  const responses = operation.responses as Record<string, Json>;
  const withCaller = operation.security !== undefined;
  operation.parameters = [...(operation.parameters ?? []), parameter(withCaller ? KEPT : NOT_KEPT)];
  addProblemCode(responses, 'invalid_idempotency_key');
  if (!withCaller) return;
  addProblemCode(responses, 'idempotency_key_in_use');
  addProblemCode(responses, 'idempotency_answer_unreadable');
  addProblemCode(responses, 'idempotency_key_reused');
  for (const [status, response] of Object.entries(responses)) {
    if (status.startsWith('2')) response.headers = { ...response.headers, 'Idempotent-Replayed': REPLAYED };
  }
}
