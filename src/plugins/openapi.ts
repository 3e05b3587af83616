/**
 * The OpenAPI 3.1 document, generated from the same schemas that validate and
 * serialise. It is a product: clients are generated from it
 * (clients/typescript/, `npm run client:generate`) and Redocly lints it in CI
 * (`npm run lint:openapi`, recommended rules, no warnings).
 *
 * How to add an operation properly:
 * 1. In its *-schemas.ts, declare every request body, record and listing with
 *    `Component('PascalName', Type.Object(..., { description, examples: [...] }))`
 *    (listings: `Listing(Item, 'ItemListing', { examples })`). The first example
 *    becomes the example of every request and response that uses the schema.
 *    Query strings and path parameters stay plain Type.Object (no name).
 * 2. In its *-docs.ts, under its `operationId` (camelCase, unique), its
 *    `summary` and `description` (the rules a client must know); the feature's
 *    tag is one of TAGS below (add a tag there with its description).
 *    In its *-routes.ts, the schema has: `...FEATURE_DOCS.operationId`, `security`
 *    (SECURITY_ANY / SECURITY_BEARER; leave it out on a public operation: it
 *    becomes `security: []`), `body: Ref(Body)`, and every response:
 *    `{ 200: Ref(Record), ...problems(...WITH_BODY, ...AUTHENTICATED, 'merchant_not_found', ...ALWAYS) }`
 *    naming every error `code` it can answer (src/schemas/problems.ts); a new
 *    code goes into src/error-catalogue.ts and docs/api.md's table of codes.
 * 3. Run `npm run lint:openapi` and `npm run client:generate`, and commit
 *    clients/typescript/schema.d.ts.
 * A query parameter with a default is optional in the document (filled in by
 * the validator); error examples are made here from the codes of each response.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import packageJson from '../../package.json' with { type: 'json' };
import { type ErrorCode, errorEntry } from '../error-catalogue.js';
import { API_BASE_PATH } from '../lib/base-path.js';
import { componentSchemas, MAX_PAGE_SIZE } from '../schemas/common.js';
import { webhookEventsDocument } from '../features/webhooks/webhooks-docs.js';
import { declareIdempotencyKey } from './openapi-idempotency.js';
import { allowInlineStyles } from './security-headers.js';

const TAGS = [
  {
    name: 'auth',
    description: 'Log in with user and password, refresh and revoke tokens, and verify access tokens (JWKS).',
  },
  {
    name: 'api-keys',
    description:
      'API keys for integrations: create, list, rename, roll and revoke. A key authenticates with the X-Api-Key header.',
  },
  { name: 'merchants', description: "The caller's merchants." },
  { name: 'payment plans', description: 'The catalogue of payment plans (fee rules) a customer may assign.' },
  {
    name: 'fee rules',
    description:
      'Bulk assignment of payment plans to merchants (with dry runs), and the plans a merchant held at any instant.',
  },
  {
    name: 'fee quotes',
    description:
      'What transactions pay under the plan in force at an instant, with exact decimal arithmetic: up to 1,000 in JSON, any number in an NDJSON stream.',
  },
  {
    name: 'change requests',
    description:
      "Fee changes held for a second ADMIN's approval when the customer's policy requires it (approval_policy.fee_changes on /v1/customers/me): list, read with the current preview, approve, reject, cancel.",
  },
  {
    name: 'audit',
    description: "The audit trail of the caller's customer: every change, recorded in the transaction that made it.",
  },
  {
    name: 'webhooks',
    description:
      "Subscriptions to the events of the caller's customer, signed as Standard Webhooks and delivered at least once; their deliveries, retries and test events. The `webhooks` section describes each event.",
  },
  {
    name: 'users',
    description:
      "The customer's back-office users and their roles, the caller's own password and two-factor codes, forgotten passwords, and the customer's two-factor rule.",
  },
  { name: 'operations', description: 'Liveness and readiness probes for the operator.' },
];

const PROBLEM_TYPE_BASE = 'https://feegate.dev/problems/';

const EXAMPLE_EXTENSIONS: Record<string, Record<string, unknown>> = {
  insufficient_permissions: { required_permission: 'merchants:write' },
  validation_failed: { errors: [{ field: 'payment_plan_ids', message: 'must have at least 1 item' }] },
  unknown_payment_plans: { payment_plan_ids: ['7d0c7a52-3b8e-4f4e-9c61-0b2f5d8a9e13'] },
  unknown_merchants: { merchant_ids: ['c4a1e2f3-6b7d-4e8f-a9b0-1c2d3e4f5a6b'] },
  conflicting_payment_plans: {
    payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b', '1f7a2b3c-4d5e-4f6a-9b0c-1d2e3f4a5b6c'],
    conflicts: [{ payment_plan_ids: ['0e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b', '1f7a2b3c-4d5e-4f6a-9b0c-1d2e3f4a5b6c'] }],
  },
};

// biome-ignore lint/suspicious/noExplicitAny: the generated OpenAPI document is walked as untyped JSON.
type Json = Record<string, any>;

/** One example per code, its title and detail the catalogue's (src/error-catalogue.ts). */
function problemExamples(path: string, codes: ErrorCode[]): Json {
  const examples: Json = {};
  for (const code of codes) {
    const { status, title, detail } = errorEntry(code);
    examples[code] = {
      value: {
        type: `${PROBLEM_TYPE_BASE}${code}`,
        title,
        status,
        detail,
        instance: path.replace(/\{id\}/g, '3f0c2a8e-5b1d-4c6e-9a7f-2d8b4e6c1a90'),
        code,
        request_id: '5b7e1f0a-8c2d-4e3f-9a1b-6c4d2e8f0a17',
        ...EXAMPLE_EXTENSIONS[code],
      },
    };
  }
  return examples;
}

/** The first example of the schema (or of the component it names) becomes the media example. */
/** The schema of a media entry, its $ref resolved. */
function schemaOf(doc: Json, media: Json): Json | undefined {
  const ref: unknown = media.schema?.$ref;
  return typeof ref === 'string' ? doc.components?.schemas?.[ref.replace('#/components/schemas/', '')] : media.schema;
}

/** Whether an object schema asks for anything: a required field or a least number of them. */
function requires(schema: Json | undefined): boolean {
  return schema?.type !== 'object' || (schema.required?.length ?? 0) > 0 || (schema.minProperties ?? 0) > 0;
}

function exampleOf(doc: Json, media: Json): void {
  if (media.example !== undefined || media.examples !== undefined || !media.schema) return;
  const schema = schemaOf(doc, media);
  if (Array.isArray(schema?.examples) && schema.examples.length > 0) media.example = schema.examples[0];
}

/** The sentence each authenticated operation's description ends with: the permission it needs (contract section 22). */
export function permissionSentence(permission: string): string {
  return permission === 'none'
    ? ' Permission: none; any authenticated caller may call it (x-feegate-permission: none), within the rules above.'
    : ` Permission: \`${permission}\`; an API key without it gets 403 insufficient_permissions (with required_permission), a login holds it when its role does (a VIEWER: every :read) (x-feegate-permission).`;
}

/** What the generator cannot know: public operations, optional defaulted parameters, examples. */
function finishDocument(doc: Json): Json {
  for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (method === 'post' || method === 'patch') declareIdempotencyKey(operation);
      const permission = operation['x-feegate-permission'];
      if (typeof permission === 'string')
        operation.description = `${operation.description ?? ''}${permissionSentence(permission)}`;
      operation.security ??= [];
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'query' && parameter.schema?.default !== undefined) parameter.required = false;
      }
      for (const media of Object.values((operation.requestBody?.content ?? {}) as Record<string, Json>)) {
        exampleOf(doc, media);
        // A body whose every field is optional may be left out (the roll route takes none as {}).
        if (!requires(schemaOf(doc, media))) operation.requestBody.required = false;
      }
      for (const response of Object.values(operation.responses as Record<string, Json>)) {
        for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
          const codes: ErrorCode[] | undefined = media.schema?.allOf?.[1]?.properties?.code?.enum;
          if (type === 'application/problem+json' && Array.isArray(codes))
            media.examples ??= problemExamples(path, codes);
          else exampleOf(doc, media);
        }
      }
    }
  }
  doc.webhooks = webhookEventsDocument();
  return doc;
}

export const openapiPlugin = fp(async (app: FastifyInstance) => {
  for (const schema of componentSchemas()) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'feegate',
        version: packageJson.version,
        description:
          'Access and payment-plan administration API: login and tokens, API keys, and bulk assignment of payment plans (fee rules) to merchants. Errors are RFC 9457 problem details (application/problem+json) with a stable `code` and the `request_id`.\n\n' +
          'Besides the errors listed per operation, any request may be answered before it reaches an operation with: ' +
          '404 `not_found` (unknown path); 405 `method_not_allowed` (a known path without this method; the `Allow` header lists its methods); ' +
          '400 `malformed_url` (undecodable percent-encoding), `malformed_request` (not valid HTTP/1.1) or `bad_request` (a request that could not be read otherwise); 414 `uri_too_long` (a path segment over 100 characters); ' +
          "400 `ambiguous_credentials` (both `Authorization` and `X-Api-Key`, on any path but the SDK's `POST /auth/users`); 431 `request_header_fields_too_large`; 408 `request_timeout` (headers and body not fully received within REQUEST_TIMEOUT_SECONDS, 30 s by default). " +
          'After a 400 `malformed_request`, 408 or 431 the server closes the connection; idle keep-alive connections are closed after 5 s. ' +
          'The path decides first: an unknown path is a 404 and a known one without the method a 405 whatever the body, and an empty body sent as `application/json` (`Content-Length: 0`, or none) is no body. ' +
          `Every operation also answers under ${API_BASE_PATH} (the second server): ${API_BASE_PATH}/v1/login is /v1/login. ` +
          `Listings serve at most ${MAX_PAGE_SIZE} per page: a larger \`size\` is served as ${MAX_PAGE_SIZE}, and \`page.size\` tells the size used. ` +
          'Every answer to an authenticated request, and every answer carrying a token or an API key, has `Cache-Control: no-store`.',
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      servers: [
        {
          url: '{origin}',
          description: 'The deployment: its scheme, host and port (npm start listens on http://127.0.0.1:3000)',
          variables: { origin: { default: 'http://127.0.0.1:3000' } },
        },
        {
          url: `{origin}${API_BASE_PATH}`,
          description: `The platform's base URL: every operation answers under ${API_BASE_PATH} exactly as at its own path (${API_BASE_PATH}/v1/login is /v1/login)`,
          variables: { origin: { default: 'http://127.0.0.1:3000' } },
        },
      ],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'access_token from POST /v1/login',
          },
          apiKeyAuth: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Api-Key',
            description: 'A key from POST /v1/api-keys or `feegate keys issue`',
          },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    transformObject: (documentObject) => finishDocument((documentObject as { openapiObject: Json }).openapiObject),
  });
  await app.register(async (docs) => {
    docs.addHook('onRequest', allowInlineStyles);
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
});
