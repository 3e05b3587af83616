/** Schemas shared by every feature: identifiers, timestamps, pages, the problem; the codes an operation answers are in problems.ts. */
import { PERMISSIONS } from '../lib/permissions.js';
import { Type, type Static, type StringOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';

/**
 * Named schemas: every record, listing and request body is a component of the
 * OpenAPI document (`#/components/schemas/<name>`), so generated clients get
 * named types. Declare one with `Component('Name', schema)` in a *-schemas.ts
 * and use it in a route (or in another schema) as `Ref(schema)`; src/plugins/
 * openapi.ts registers them all. Give it `examples: [...]`: the first one is
 * the example of every request and response that uses it.
 */
const components = new Map<string, TSchema>();

export function Component<T extends TSchema>(name: string, schema: T): T {
  if (components.has(name)) throw new Error(`schema ${name} is declared twice`);
  const named = { ...schema, $id: name } as T;
  components.set(name, named);
  return named;
}

/** Every schema declared with Component(), for app.addSchema. */
export function componentSchemas(): TSchema[] {
  return [...components.values()];
}

/** A reference to a named schema, typed as the schema itself. */
export function Ref<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  if (!schema.$id || !components.has(schema.$id)) throw new Error('Ref() needs a schema declared with Component()');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

/**
 * What a person reads when a value does not match a pattern (the `errors` of a
 * 400, src/plugins/problem-details.ts). Declare a pattern with `Pattern()`.
 */
const patternMessages = new Map<string, string>();

export function Pattern(pattern: string, message: string): string {
  patternMessages.set(pattern, message);
  return pattern;
}

export function patternMessage(pattern: string): string | undefined {
  return patternMessages.get(pattern);
}

/**
 * Text a client sends. PostgreSQL cannot store U+0000, and an unpaired UTF-16
 * surrogate is no character (it has no UTF-8 form; PostgreSQL refuses it in
 * JSON): both are a 400 naming the field, never sent to the database. ajv
 * matches patterns per code point (the `u` flag), so a pair (an emoji) is one
 * character and is accepted.
 */
export const TEXT_PATTERN = Pattern(
  '^[^\\u0000\\uD800-\\uDFFF]*$',
  'must not contain U+0000 or an unpaired UTF-16 surrogate',
);

/**
 * TEXT_PATTERN, and at least one visible character (a letter, number,
 * punctuation or symbol): for text that must say something (a reason). White
 * space and invisible format characters (zero-width spaces and joiners, U+2060,
 * U+FEFF) alone say nothing, nor do the blanks Unicode files as letters or
 * symbols (the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the blank braille
 * pattern U+2800, the null notehead U+1D159). The `\p{...}` classes need the `u`
 * flag, which ajv matches patterns with.
 */
export const SAYING_TEXT_PATTERN = Pattern(
  '^(?=[\\s\\S]*(?![\\u115F\\u1160\\u3164\\uFFA0\\u2800\\u{1D159}])[\\p{L}\\p{N}\\p{P}\\p{S}])[^\\u0000\\uD800-\\uDFFF]*$',
  'must say something (a letter, number, punctuation or symbol, not only spaces or invisible characters) and not contain U+0000 or an unpaired UTF-16 surrogate',
);

/** A string field or parameter of a request: every one refuses what TEXT_PATTERN refuses. */
export function Text(options: StringOptions = {}) {
  return Type.String({ pattern: TEXT_PATTERN, ...options });
}

/**
 * Identifiers are UUIDs in any letter case, compared and answered in lower case
 * (RFC 9562): the validator lower-cases every value of a schema marked
 * `x-lowercase` (src/plugins/validation.ts). The pattern keeps out the
 * `urn:uuid:` form that the uuid format admits but PostgreSQL does not.
 */
export const Uuid = Type.String({
  format: 'uuid',
  pattern: Pattern('^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', 'must be a UUID'),
  'x-lowercase': true,
  description: 'UUID (RFC 9562): sent in any letter case, always answered in lower case',
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

/**
 * The server's e-mail rule, stated exactly as a pattern (ajv's `email` format,
 * written without the `i` flag): a dot-atom local part and a domain of at least
 * two labels, so `ops@localhost` is refused, as the document says.
 */
const EMAIL_LOCAL = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*";
const EMAIL_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
export const Email = Type.String({
  format: 'email',
  pattern: Pattern(
    `^${EMAIL_LOCAL}@(?:${EMAIL_LABEL}\\.)+${EMAIL_LABEL}$`,
    'must be an e-mail address such as name@example.com (a domain with a dot)',
  ),
  maxLength: 254,
  description: 'E-mail address: name@domain with at least one dot in the domain',
});

/**
 * An instant a client sends: RFC 3339 with `T` and a zone (`Z` or ±hh:mm), no
 * leap second (23:59:60 is no instant a Date or PostgreSQL holds), year 0001 or
 * later; src/lib/instant.ts also refuses what falls outside 0001..9999 in UTC.
 */
export const INSTANT_PATTERN = Pattern(
  '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-5][0-9](?:\\.[0-9]{1,9})?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})$',
  'must be an RFC 3339 date-time with a time zone, e.g. 2026-03-01T12:00:00Z (no leap second, years 0001..9999)',
);

export function InstantText(description: string) {
  return Type.String({
    format: 'date-time',
    pattern: INSTANT_PATTERN,
    description: `${description}; RFC 3339 with a time zone (Z or ±hh:mm), years 0001..9999 in UTC`,
  });
}

export const ProblemSchema = Component(
  'Problem',
  Type.Object(
    {
      type: Type.String({ description: 'URI identifying the problem type: https://feegate.dev/problems/<code>' }),
      title: Type.String({ description: 'The HTTP reason phrase' }),
      status: Type.Integer({ description: 'The HTTP status' }),
      detail: Type.String({ description: 'What went wrong, for a person' }),
      instance: Type.String({ description: 'The request path' }),
      code: Type.String({ description: 'Stable snake_case error code; each response lists the codes it can carry' }),
      request_id: Type.String({ description: 'Also in the X-Request-Id header; quote it when reporting a problem' }),
      errors: Type.Optional(
        Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
          description: 'On validation_failed: each field that is not valid',
        }),
      ),
      payment_plan_ids: Type.Optional(
        Type.Array(Uuid, {
          description: 'On unknown_payment_plans: the unknown ids; on conflicting_payment_plans: every conflicting id',
        }),
      ),
      merchant_ids: Type.Optional(
        Type.Array(Uuid, {
          description:
            'On unknown_merchants: the ids that are not merchants of the caller customer; on inactive_merchants: the INACTIVE ones',
        }),
      ),
      conflicts: Type.Optional(
        Type.Array(Type.Object({ payment_plan_ids: Type.Array(Uuid) }), {
          description: 'On conflicting_payment_plans: each group of plans of the same kind and term',
        }),
      ),
      required_permission: Type.Optional(
        Type.Union(
          PERMISSIONS.map((p) => Type.Literal(p)),
          {
            description:
              "On insufficient_permissions and insufficient_role: the permission the operation needs (its x-feegate-permission), which the key or the login's role lacks",
          },
        ),
      ),
    },
    {
      additionalProperties: true,
      description: 'RFC 9457 problem details (application/problem+json)',
      examples: [
        {
          type: 'https://feegate.dev/problems/invalid_token',
          title: 'Unauthorized',
          status: 401,
          detail: 'The access token is not valid or has expired.',
          instance: '/v1/users/me',
          code: 'invalid_token',
          request_id: '5b7e1f0a-8c2d-4e3f-9a1b-6c4d2e8f0a17',
        },
      ],
    },
  ),
);

/**
 * The largest page a listing serves. Integrations ask for `size=10000` to take a
 * whole list: a larger size is served as this one, not refused, and `page.size`
 * says so (`x-clamp-maximum`, src/plugins/validation.ts).
 */
export const MAX_PAGE_SIZE = 1000;

/** Where a page sits in its listing, for listings that serve at most `maxSize` a page. */
export function pageDescriptor(name: string, maxSize: number, description: string) {
  return Component(
    name,
    Type.Object(
      {
        size: Type.Integer({
          minimum: 1,
          maximum: maxSize,
          description: `Results per page: the size asked for, or ${maxSize} when it asked for more`,
        }),
        total_elements: Type.Integer(),
        total_pages: Type.Integer(),
        number: Type.Integer({ description: 'Zero-based number of the returned page' }),
      },
      { description, examples: [{ size: 10, total_elements: 1, total_pages: 1, number: 0 }] },
    ),
  );
}

export const PageDescriptor = pageDescriptor('Page', MAX_PAGE_SIZE, 'Where a listing page sits in the whole result');

export const PageQuery = {
  page: Type.Integer({
    minimum: 0,
    maximum: 2_147_483_647,
    default: 0,
    description: 'Zero-based page number (0..2147483647)',
  }),
  size: Type.Integer({
    minimum: 1,
    default: 10,
    'x-clamp-maximum': MAX_PAGE_SIZE,
    description: `Results per page: an integer of at least 1. A size above ${MAX_PAGE_SIZE} is not refused: it is served as ${MAX_PAGE_SIZE}, and page.size of the answer tells the size used`,
  }),
};

/** A page of `item`s; named (a component) when `name` is given, as every listing of the API should be. */
export function Listing<T extends TSchema>(
  item: T,
  name?: string,
  options: { description?: string; examples?: unknown[] } = {},
) {
  const listing = Type.Object({ data: Type.Array(item.$id ? Ref(item) : item), page: Ref(PageDescriptor) }, options);
  return name ? Component(name, listing) : listing;
}

/** The query string of an operation that takes none: an unknown parameter is a 400, as everywhere. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const NoContent = Type.Null({ description: 'No body' });

/** What the document says of an operation besides its HTTP: a summary and the rules a client must know. */
export interface OperationText {
  summary: string;
  description: string;
}

/**
 * The documentation of a feature's operations, keyed by operationId, all under
 * one tag (src/plugins/openapi.ts). It lives in the feature's *-docs.ts, and a
 * route spreads its entry into its schema (`...API_KEYS_DOCS.createApiKey`), so
 * that *-routes.ts keeps to HTTP.
 */
export function operationDocs<Id extends string>(tag: string, operations: Record<Id, OperationText>) {
  const entries = Object.entries<OperationText>(operations).map(([operationId, text]) => [
    operationId,
    { operationId, tags: [tag], ...text },
  ]);
  return Object.fromEntries(entries) as Record<Id, OperationText & { operationId: Id; tags: string[] }>;
}

type Security = Array<Record<string, string[]>>;
export const SECURITY_ANY: Security = [{ bearerAuth: [] }, { apiKeyAuth: [] }];
export const SECURITY_BEARER: Security = [{ bearerAuth: [] }];
