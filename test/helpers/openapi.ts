/**
 * The operations of the OpenAPI document, as the generic tests walk them
 * (test/platform/openapi-constraints.test.ts, test/platform/fuzz.test.ts).
 */
import type { FastifyInstance } from 'fastify';
import { catalogue } from '../../src/error-catalogue.js';

export type Schema = Record<string, any>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
  example?: unknown;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  /** The JSON body's schema, $refs resolved at the top; undefined when the operation takes none. */
  body: Schema | undefined;
  bodyExample: unknown;
  /** Whether the document says the body must be sent (requestBody.required). */
  bodyRequired: boolean;
  secured: boolean;
  /** Whether every success answer is JSON or empty (the audit export streams text instead). */
  answersJson: boolean;
  /** The error codes the document lists for each status (`code` enums of its problem responses). */
  codes: Map<number, string[]>;
}

export async function openapiDocument(app: FastifyInstance): Promise<Schema> {
  const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /v1/openapi.json: ${response.statusCode}`);
  return response.json();
}

/** The schema itself, or the component it names (`$ref`), recursively. */
export function resolve(doc: Schema, schema: Schema): Schema {
  const ref: unknown = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const target = doc.components?.schemas?.[ref.replace('#/components/schemas/', '')];
  if (!target) throw new Error(`unresolved ${ref}`);
  return resolve(doc, target);
}

export function operations(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const media = op.requestBody?.content?.['application/json'];
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        parameters: (op.parameters ?? []).map((p: Schema) => ({
          name: p.name,
          in: p.in,
          required: Boolean(p.required),
          schema: resolve(doc, p.schema ?? {}),
          example: p.example ?? p.schema?.examples?.[0],
        })),
        body: media?.schema ? resolve(doc, media.schema) : undefined,
        bodyExample: media?.example,
        bodyRequired: Boolean(op.requestBody?.required),
        secured: Array.isArray(op.security) && op.security.length > 0,
        answersJson: Object.entries((op.responses ?? {}) as Record<string, Schema>)
          .filter(([status]) => status.startsWith('2'))
          .every(([, response]) => !response.content || 'application/json' in response.content),
        codes: new Map(
          Object.entries((op.responses ?? {}) as Record<string, Schema>).map(([status, response]) => [
            Number(status),
            response.content?.['application/problem+json']?.schema?.allOf?.[1]?.properties?.code?.enum ?? [],
          ]),
        ),
      });
    }
  }
  return out;
}

/** `/v1/api-keys/{id}` with `{ id }` filled in, each value percent-encoded. */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_all, name: string) => values[name] ?? '');
}

/** A query string from raw values; a value that is an array is sent once per item. */
export function queryString(values: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Codes any request may get before or around its operation (routing, the HTTP parser): the document says so once, not per operation. */
const ANY_REQUEST = new Set<string>(
  catalogue()
    .filter((e) => e.scope === 'any-request')
    .map((e) => e.code),
);

/**
 * What each operation answered, against what its document lists: the generic
 * tests record every answer, and an error code the operation's document does
 * not list for that status is a finding (a route whose problems() misses a
 * code it can answer).
 */
export class AnswerLedger {
  private readonly undocumentedAnswers = new Map<string, string>();
  private errors = 0;

  record(op: Operation, status: number, body: string): void {
    if (status < 400) return;
    this.errors++;
    let code: unknown;
    try {
      code = (JSON.parse(body) as { code?: unknown }).code;
    } catch {
      code = undefined;
    }
    if (typeof code === 'string' && (ANY_REQUEST.has(code) || op.codes.get(status)?.includes(code))) return;
    const key = `${op.method} ${op.path} ${status} ${String(code)}`;
    if (!this.undocumentedAnswers.has(key)) this.undocumentedAnswers.set(key, body.slice(0, 200));
  }

  /** Each operation, status and code answered but not listed, with the first such answer. */
  undocumented(): string[] {
    return [...this.undocumentedAnswers].map(([key, body]) => `${key}: ${body}`);
  }

  /** How many error answers were recorded: a ledger that saw none proves nothing. */
  get recordedErrors(): number {
    return this.errors;
  }
}
