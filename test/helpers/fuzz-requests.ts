/** Fast-check generators of requests to an OpenAPI operation for fuzz.test.ts: mostly valid values, often hostile ones. */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { API_BASE_PATH } from '../../src/lib/base-path.js';
import { fillPath, type Operation, resolve, type Schema } from './openapi.js';

/** Text PostgreSQL, UTF-8 or a number parser may choke on. */
const HOSTILE_TEXT = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'a\udfffb',
  '\udc00\ud800',
  '😀',
  '\u202e\u200b',
  "'; DROP TABLE users; --",
  '%00',
  '../../etc/passwd',
  '1e21',
  '99999999999999999999',
  '2147483648',
  '-1',
  '-0',
  'Infinity',
  'NaN',
  '0x10',
  '1.0',
  ' 5',
  'true',
  'null',
  '[]',
  '{}',
  'ops@localhost',
  'a@b',
  '2026-12-31T23:59:60Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+23:59',
  '9999-12-31T23:59:59-23:59',
  '2026-02-30T00:00:00Z',
  'urn:uuid:0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  '0E6F1A2B-3C4D-4E5F-8A9B-0C1D2E3F4A5B',
  '0e6f1a2b3c4d4e5f8a9b0c1d2e3f4a5b',
  '{0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b}',
  '0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5',
  'g0000000-0000-0000-0000-000000000000',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
];

const HOSTILE_NUMBERS = [
  0,
  -1,
  1.5,
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 53),
  1e21,
  1e308,
  -1e308,
  Number.MIN_VALUE,
  2_147_483_647,
  2_147_483_648,
];

const hostileText = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  // Some text with a NUL or an unpaired surrogate somewhere inside.
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.string({ maxLength: 6 }),
        fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00'),
        fc.string({ maxLength: 6 }),
      )
      .map((p) => p.join('')),
  },
  { weight: 1, arbitrary: fc.integer({ min: 255, max: 5000 }).map((n) => 'x'.repeat(n)) },
);

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: hostileText },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
  { weight: 1, arbitrary: fc.array(hostileText, { maxLength: 3 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.constantFrom('a', '__proto__', 'constructor', 'user'), hostileText, { maxKeys: 2 }),
  },
  { weight: 1, arbitrary: fc.integer({ min: 201, max: 260 }).map((n) => Array.from({ length: n }, randomUUID)) },
);

/** Query values arrive as text; an array is the parameter repeated. Raw: sent without percent-encoding. */
const RAW_QUERY = ['%ED%A0%80', '%ff', '%', '%zz', '%00', '%2', '&&', '=='];
type QueryValue = string | string[] | { raw: string };
const hostileQuery: fc.Arbitrary<QueryValue> = fc.oneof(
  { weight: 6, arbitrary: hostileText },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS).map(String) },
  { weight: 1, arbitrary: fc.array(hostileText, { minLength: 2, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERY).map((raw) => ({ raw })) },
);

/** The world's ids and addresses that valid values are drawn from. */
export interface Ids {
  customers: string[];
  merchants: string[];
  plans: string[];
  victimKeys: string[];
  emails: string[];
}

/** A valid id of something that exists (sometimes in upper case), or of nothing. */
const someId = (ids: string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ids) },
    { weight: 2, arbitrary: fc.constantFrom(...ids).map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: fc.uuid() },
  );

/** A value the schema admits, often one of the world's. */
function validValue(doc: Schema, raw: Schema, ids: Ids, name: string): fc.Arbitrary<unknown> {
  const schema = resolve(doc, raw);
  const allowed: unknown[] | undefined =
    schema.enum ??
    (schema.anyOf?.every((b: Schema) => b.const !== undefined) ? schema.anyOf.map((b: Schema) => b.const) : undefined);
  if (allowed) return fc.constantFrom(...allowed);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'uuid') {
        const pool = /merchant/.test(name)
          ? ids.merchants
          : /plan/.test(name)
            ? ids.plans
            : /customer/.test(name)
              ? ids.customers
              : ids.victimKeys;
        return someId(pool);
      }
      if (schema.format === 'date-time')
        return fc
          .integer({ min: -400, max: 400 })
          .map((days) => new Date(Date.now() + days * 86_400_000).toISOString());
      if (schema.format === 'email') return fc.constantFrom(...ids.emails);
      if (schema.examples?.[0] !== undefined) return fc.constantFrom(...(schema.examples as unknown[]));
      if (schema.default !== undefined) return fc.constant(schema.default);
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 20, 20) });
    case 'integer':
      // Past a clamped maximum too: a listing's size=10000 is served, as 1000.
      return fc.integer({
        min: schema.minimum ?? -1000,
        max: schema['x-clamp-maximum'] ? schema['x-clamp-maximum'] * 10 : Math.min(schema.maximum ?? 1000, 1000),
      });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(validValue(doc, schema.items ?? {}, ids, name), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case 'object': {
      const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      const fields = Object.fromEntries(properties.map(([key, property]) => [key, valueFor(doc, property, ids, key)]));
      return fc.record(fields, { requiredKeys: schema.required ?? [] });
    }
    default:
      return fc.string({ maxLength: 8 });
  }
}

/** Mostly valid, often hostile: a request reaches the service as often as it stops at validation. */
function valueFor(doc: Schema, schema: Schema, ids: Ids, name: string): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary: validValue(doc, schema, ids, name) }, { weight: 1, arbitrary: hostileJson });
}

/** Who a request claims to be: one of the test's callers, or a header that is not a credential. */
export type Auth =
  | 'none'
  | 'token'
  | 'customerKey'
  | 'merchantKey'
  | 'both'
  | 'limitedKey'
  | 'readOnlyKey'
  | { header: 'authorization' | 'x-api-key'; value: string };
/** Credential headers that are not credentials (header values are Latin-1: no NUL or surrogate can be sent). */
const BAD_CREDENTIALS = [
  'Bearer not.a.token',
  'Bearer',
  'Bearer ',
  'Basic YTpi',
  'bearer x',
  'Bearer é.é.é',
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  'fgk_',
  'fgk_ééé',
  '',
];
/** Mostly good credentials, so that requests get past authentication. */
const auth: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<Auth>('token', 'customerKey', 'merchantKey') },
  // A key past its rate limit and a read-only key: their refusals are answers of every operation too.
  { weight: 1, arbitrary: fc.constantFrom<Auth>('none', 'both', 'limitedKey', 'readOnlyKey') },
  {
    weight: 1,
    arbitrary: fc.record({
      header: fc.constantFrom('authorization' as const, 'x-api-key' as const),
      value: fc.oneof(
        fc.constantFrom(...BAD_CREDENTIALS),
        fc.integer({ min: 100, max: 9000 }).map((n) => `fgk_${'x'.repeat(n)}`),
      ),
    }),
  },
);

/** Mostly JSON; now and then a media type the service does not take, or JSON spelt oddly. */
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/json; charset=UTF-8',
  'application/problem+json',
  '',
];
const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
);

/** One request, printed as it is when a run fails. */
export interface FuzzRequest {
  operationId: string;
  method: string;
  url: string;
  contentType: string;
  auth: Auth;
  /** JSON text of the body, or malformed text. */
  body: string | undefined;
  /** A listing's largest page: its `size` parameter's `x-clamp-maximum`. */
  largestPage: number | undefined;
}

/** Requests for `op`: path, query and body from its schemas, valid or hostile, with credentials and a base path. */
export function requestFor(doc: Schema, op: Operation, ids: Ids): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const params = fc.record(
    Object.fromEntries(
      pathParams.map((p) => [
        p.name,
        // Percent-encoded as a client would, any length (over 100 characters is a 414 before routing);
        // a malformed escape in the path is a pre-route error, tested in pre-route-errors.test.ts.
        fc
          .oneof(
            { weight: 3, arbitrary: validValue(doc, p.schema, ids, p.name) },
            { weight: 2, arbitrary: hostileText },
          )
          .map((v) => encodeURIComponent(wellFormed(String(v)))),
      ]),
    ),
  ) as fc.Arbitrary<Record<string, string>>;
  const queryValue = (schema: Schema, name: string): fc.Arbitrary<QueryValue> =>
    fc.oneof(
      { weight: 3, arbitrary: validValue(doc, schema, ids, name).map(String) },
      { weight: 2, arbitrary: hostileQuery },
    );
  const query = fc
    .tuple(
      ...queryParams.map((p) =>
        fc.option(
          queryValue(p.schema, p.name).map((v): [string, QueryValue] => [p.name, v]),
          { freq: 2, nil: undefined },
        ),
      ),
      // Now and then a parameter the operation does not have.
      fc.oneof(
        { weight: 12, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom('unknown', 'PAGE', 'page[]', '__proto__', ''), hostileQuery) },
      ),
    )
    .map((entries) => entries.filter((e): e is [string, QueryValue] => e !== undefined));
  const body: fc.Arbitrary<string | undefined> = op.body
    ? fc.oneof(
        { weight: 8, arbitrary: validValue(doc, op.body, ids, 'body').map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: hostileJson.map((v) => JSON.stringify(v)) },
        {
          weight: 1,
          arbitrary: fc.constantFrom('{', '', 'null', '"\\u0000"', '{"a":1}{', '\u0000', '[', '{"user":"\\ud800"}'),
        },
      )
    : // An empty body declared as JSON, as integrations send on DELETE and logout, or some JSON.
      fc.option(
        fc.oneof(
          fc.constant(''),
          hostileJson.map((v) => JSON.stringify(v)),
        ),
        { freq: 10, nil: undefined },
      );
  const base = fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constant(API_BASE_PATH) },
  );
  return fc
    .record({ auth, params, query, body, contentType, base })
    .map(({ auth: caller, params: values, query: entries, body: text, contentType: type, base: prefix }) => ({
      operationId: op.operationId,
      method: op.method,
      url: prefix + fillPath(op.path, values) + encodeQuery(entries),
      contentType: type,
      auth: caller,
      body: text,
      largestPage: queryParams.find((p) => p.name === 'size')?.schema['x-clamp-maximum'],
    }));
}

/** A URL carries UTF-8: an unpaired surrogate cannot be sent in one (it becomes U+FFFD, as a browser sends it). */
const wellFormed = (text: string) => text.replace(/[\ud800-\udfff]/gu, '\ufffd');

function encodeQuery(query: Array<[string, QueryValue]>): string {
  const parts: string[] = [];
  const enc = (text: string) => encodeURIComponent(wellFormed(text));
  for (const [name, value] of query) {
    if (typeof value === 'object' && !Array.isArray(value)) parts.push(`${enc(name)}=${value.raw}`);
    else for (const item of Array.isArray(value) ? value : [value]) parts.push(`${enc(name)}=${enc(item)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}
