/** Schemas shared by every feature: identifiers, timestamps, pages, problems. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

// The pattern keeps out the `urn:uuid:` form that the uuid format admits but PostgreSQL does not.
export const Uuid = Type.String({
  format: 'uuid',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'UUID',
});
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, milliseconds, Z' });
/**
 * `type: [T, 'null']` rather than anyOf: fast-json-stringify serialises it
 * directly instead of validating every value against each branch.
 */
export function Nullable<T extends TSchema>(schema: T, description?: string) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'], ...(description ? { description } : {}) });
}

export const Email = Type.String({ format: 'email', maxLength: 254, description: 'E-mail address' });

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI identifying the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path' }),
    code: Type.String({ description: 'Stable snake_case error code' }),
    request_id: Type.String(),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'Present on input errors',
      }),
    ),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details' },
);

const STATUS_TEXT: Record<number, string> = {
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

/** Problem-details responses for the given statuses, with a description per status. */
export function problems(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) {
    out[status] = {
      description: STATUS_TEXT[status] ?? 'Error',
      content: { 'application/problem+json': { schema: Type.Ref('Problem') } },
    } as unknown as TSchema;
  }
  return out;
}

/** Statuses any operation can answer, whatever it does. */
export const ALWAYS = [500, 503] as const;
/** Statuses of an operation that takes a JSON body. */
export const WITH_BODY = [400, 413, 415] as const;
/** Statuses of an authenticated operation. */
export const AUTHENTICATED = [400, 401] as const;

export const PageDescriptor = Type.Object({
  size: Type.Integer({ description: 'Results per page' }),
  total_elements: Type.Integer(),
  total_pages: Type.Integer(),
  number: Type.Integer({ description: 'Zero-based number of the returned page' }),
});

export const PageQuery = {
  page: Type.Integer({ minimum: 0, default: 0, description: 'Zero-based page number' }),
  size: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Results per page (1..100)' }),
};

export function Listing<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), page: PageDescriptor });
}

export const NoContent = Type.Null({ description: 'No body' });

type Security = Array<Record<string, string[]>>;
export const SECURITY_ANY: Security = [{ bearerAuth: [] }, { apiKeyAuth: [] }];
export const SECURITY_BEARER: Security = [{ bearerAuth: [] }];
