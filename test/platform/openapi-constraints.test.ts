/**
 * The document states what the server enforces (docs/api.md, at its start): walked
 * generically, for every operation, its documented examples are accepted, and
 * every limit it states (minLength, maxLength, minimum, maximum, minItems,
 * maxItems, enum, pattern, required, additionalProperties, minProperties) is
 * accepted at the limit and refused one past it, with a 400 naming the field.
 * A listing's `size` states no maximum but `x-clamp-maximum`: past it, the
 * value is accepted and served as that maximum, as `page.size` must say.
 * Every refusal carries a code the operation's document lists for its status.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { webhookSubscriptions } from '../../src/db/schema.js';
import { LISTED_WEBHOOK_ID } from '../../src/features/webhooks/webhooks-schemas.js';
import { useTestApp } from '../helpers/app.js';
import { issueKey, seedWorld } from '../helpers/fixtures.js';
import {
  AnswerLedger,
  fillPath,
  type Operation,
  openapiDocument,
  operations,
  queryString,
  resolve,
  type Schema,
} from '../helpers/openapi.js';
import { fieldName, matches, OMIT, sample, setAt, type Variant, variants } from '../helpers/schema-variants.js';

interface Request {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

async function send(
  app: FastifyInstance,
  op: Operation,
  request: Request,
  headers: Record<string, string>,
  ledger: AnswerLedger,
) {
  const params = Object.fromEntries(Object.entries(request.params).map(([k, v]) => [k, encodeURIComponent(String(v))]));
  const response = await app.inject({
    method: op.method,
    url: fillPath(op.path, params) + queryString(request.query),
    headers,
    ...(op.body && request.body !== OMIT ? { payload: request.body as object } : {}),
  });
  ledger.record(op, response.statusCode, response.body);
  // Only a JSON answer is read: an export streams NDJSON or CSV.
  const body = /^application\/(problem\+)?json/.test(String(response.headers['content-type']))
    ? (response.json() as {
        code?: string;
        errors?: Array<{ field: string }>;
        page?: { size: number };
        metadata?: { size: number };
      })
    : undefined;
  return {
    status: response.statusCode,
    problem: response.statusCode >= 400 ? body : undefined,
    // GET /v1/users answers in the platform's shape: its page descriptor is `metadata`.
    pageSize: (body?.page ?? body?.metadata)?.size,
  };
}

describe('the OpenAPI document states the constraints the server enforces', () => {
  const h = useTestApp();

  it('accepts every documented example and value at a limit, and refuses one past every limit with a 400 naming the field', async () => {
    // No throttles: hundreds of requests from one address and for one user name.
    const app = await h.app({ rateLimitAnonymousPerMinute: 0, loginMaxFailures: 0, loginMaxFailuresPerUser: 0 });
    const world = await seedWorld(app);
    const { api_key } = await issueKey(app, { user: 'constraints@alpha.test', customerId: world.customerId });
    // The subscription the document's deliveries listing names exists, so that listing answers a page.
    await h.db.current.database.db.insert(webhookSubscriptions).values({
      id: LISTED_WEBHOOK_ID,
      customerId: world.customerId,
      notificationUrl: 'https://hooks.example.com/feegate',
      notificationTypes: ['API_KEY_REVOKED'],
      secret: 'Whsec-Alpha-2026',
    });
    const doc = await openapiDocument(app);
    const failures: string[] = [];
    const ledger = new AnswerLedger();
    let checked = 0;

    for (const op of operations(doc)) {
      const headers: Record<string, string> = op.secured ? { 'x-api-key': api_key } : {};
      const base: Request = {
        params: Object.fromEntries(
          op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example ?? sample(doc, p.schema)]),
        ),
        query: Object.fromEntries(
          op.parameters
            .filter((p) => p.in === 'query' && p.required)
            .map((p) => [p.name, p.example ?? sample(doc, p.schema)]),
        ),
        body: op.bodyExample,
      };
      if (op.body) assert.ok(op.bodyExample !== undefined, `${op.method} ${op.path} documents an example body`);
      const cases: Array<{ request: Request; variant: Variant; where: 'body' | 'query' | 'path' }> = [];
      for (const p of op.parameters.filter((x) => x.in === 'query' || x.in === 'path')) {
        const where = p.in === 'path' ? 'path' : 'query';
        const valid = p.example ?? sample(doc, p.schema);
        const bucket = where === 'path' ? 'params' : 'query';
        // The documented example (or a sampled valid value) of the parameter alone.
        cases.push({
          request: { ...base, [bucket]: { ...base[bucket], [p.name]: valid } },
          variant: { path: [p.name], value: valid, valid: true, why: 'its example' },
          where,
        });
        if (p.required && where === 'query')
          cases.push({
            request: { ...base, query: setAt(base.query, [p.name], OMIT) as Record<string, unknown> },
            variant: { path: [p.name], value: OMIT, valid: false, why: 'required' },
            where,
          });
        for (const variant of variants(doc, p.schema, valid, [p.name], false)) {
          if (variant.path.length !== 1 || (where === 'path' && variant.value === '')) continue;
          cases.push({
            request: { ...base, [bucket]: setAt(base[bucket], variant.path, variant.value) },
            variant,
            where,
          });
        }
      }
      if (op.body) {
        cases.push({
          request: base,
          variant: { path: [], value: op.bodyExample, valid: true, why: 'the documented example' },
          where: 'body',
        });
        const why = op.bodyRequired ? 'no body, which is required' : 'no body, which is optional';
        cases.push({
          request: { ...base, body: OMIT },
          variant: { path: [], value: OMIT, valid: !op.bodyRequired, why },
          where: 'body',
        });
        for (const variant of variants(doc, op.body, op.bodyExample, [], true)) {
          cases.push({
            request: { ...base, body: setAt(base.body, variant.path, variant.value) },
            variant,
            where: 'body',
          });
        }
      }

      for (const { request, variant, where } of cases) {
        checked++;
        const { status, problem, pageSize } = await send(app, op, request, headers, ledger);
        const label = `${op.method} ${op.path} ${where} ${fieldName(variant.path)}: ${variant.why} → ${status} ${problem?.code ?? ''}`;
        // Refused for this value: a validation failure, or any 400 naming this field (merchant_ids_required).
        // A 400 naming another field is a rule between fields (is_selected needs merchant_id) that OpenAPI cannot state.
        const refusedHere =
          status === 400 &&
          (problem?.code === 'validation_failed' ||
            Boolean(problem?.errors?.some((e) => e.field === fieldName(variant.path))));
        if (status >= 500) failures.push(`${label} (a 5xx)`);
        else if (variant.servedAs !== undefined && (status !== 200 || pageSize !== variant.servedAs))
          failures.push(`${label} (to be served as ${variant.servedAs}, page.size ${pageSize})`);
        else if (variant.valid && refusedHere)
          failures.push(`${label} (documented as valid, refused: ${JSON.stringify(problem?.errors)})`);
        else if (!variant.valid && status !== 400) failures.push(`${label} (documented as invalid, not refused)`);
        else if (!variant.valid && !problem?.errors?.some((e) => e.field === fieldName(variant.path))) {
          failures.push(
            `${label} (the 400 does not name ${fieldName(variant.path)}: ${JSON.stringify(problem?.errors)})`,
          );
        }
      }
    }
    if (process.env.CONSTRAINTS_DEBUG) console.log(checked);
    assert.deepEqual(failures, [], `${failures.length} of ${checked} checks failed`);
    assert.ok(checked > 150, `walked ${checked} cases`);
    // Every refusal's code is one the operation's document lists for that status (its problems(...)).
    assert.deepEqual(ledger.undocumented(), [], 'codes answered that the document does not list for the operation');
  });

  it('states for every text input a pattern that refuses U+0000 and unpaired surrogates', async () => {
    const app = await h.app();
    const doc = await openapiDocument(app);
    const missing: string[] = [];
    const walk = (raw: Schema, where: string): void => {
      const schema = resolve(doc, raw);
      const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (types.includes('string') && schema.const === undefined && !schema.enum) {
        if (!schema.pattern || ['\u0000', 'a\ud800', '\udfffa'].some((bad) => matches(schema.pattern, bad)))
          missing.push(where);
      }
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>))
        walk(property, `${where}.${name}`);
      if (schema.items) walk(schema.items, `${where}[]`);
      for (const branch of schema.anyOf ?? []) walk(branch, where);
    };
    for (const op of operations(doc)) {
      for (const p of op.parameters) walk(p.schema, `${op.method} ${op.path} ${p.in} ${p.name}`);
      if (op.body) walk(op.body, `${op.method} ${op.path} body`);
    }
    assert.deepEqual(missing, []);
  });
});
