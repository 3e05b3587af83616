/**
 * The one place where errors become HTTP: every AppError, Fastify error and
 * unexpected failure is answered as RFC 9457 problem details. Nothing internal
 * (stack, SQL, driver message) ever reaches a body.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isDatabaseUnavailable } from '../db/database.js';
import {
  AppError,
  ClientClosedRequestError,
  type FieldError,
  ServiceUnavailableError,
  ValidationError,
} from '../errors.js';
import { hungUp } from '../lib/request-context.js';
import { patternMessage } from '../schemas/common.js';

const TYPE_BASE = 'https://feegate.dev/problems/';

interface AjvError {
  instancePath: string;
  schemaPath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** The field an error names, `merchants[3].customer_id`; '' for the value as a whole. */
function pathOf(error: AjvError): string {
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '');
  const missing = error.params?.missingProperty ?? error.params?.additionalProperty;
  return clip(typeof missing === 'string' ? (path ? `${path}.${missing}` : missing) : path);
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

const FORMAT_MESSAGES: Record<string, string> = {
  uuid: 'must be a UUID',
  email: 'must be an e-mail address',
  'date-time': 'must be an RFC 3339 date-time with a time zone, e.g. 2026-03-01T12:00:00Z',
};

const plural = (n: unknown, word: string) => `${String(n)} ${word}${n === 1 ? '' : 's'}`;

/** What a person reads for one refusal of the validator: no schema jargon, no echo of the value. */
function messageOf(error: AjvError): string {
  const p = error.params ?? {};
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an accepted field';
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((t) => TYPE_NAMES[t] ?? t)
        .join(' or ')}`;
    case 'pattern':
      return patternMessage(String(p.pattern)) ?? `must match the pattern ${String(p.pattern)}`;
    case 'format':
      return FORMAT_MESSAGES[String(p.format)] ?? `must be in the ${String(p.format)} format`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${plural(p.limit, 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character')} long`;
    case 'minimum':
    case 'maximum':
      return `must be at ${error.keyword === 'minimum' ? 'least' : 'most'} ${String(p.limit)}`;
    case 'minItems':
      return `must have at least ${plural(p.limit, 'item')}`;
    case 'maxItems':
      return `must have at most ${plural(p.limit, 'item')}`;
    case 'minProperties':
      return `must have at least ${plural(p.limit, 'field')}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(p.allowedValue)}`;
    default:
      return error.message ?? 'is not valid';
  }
}

/**
 * A union of literals (TypeBox `Union([Literal('a'), Literal('b')])`) fails as
 * one `const` error per branch and an `anyOf`: they become one "must be one of".
 */
function collapseUnions(errors: AjvError[]): AjvError[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf');
  if (unions.length === 0) return errors;
  const inside = (e: AjvError, u: AjvError) =>
    e !== u &&
    e.instancePath === u.instancePath &&
    (e.schemaPath ?? '').startsWith(`${(u.schemaPath ?? '').replace(/\/anyOf$/, '')}/anyOf/`);
  return errors.flatMap((e) => {
    if (unions.some((u) => inside(e, u))) return [];
    if (e.keyword !== 'anyOf') return [e];
    const branches = errors.filter((b) => inside(b, e));
    const allowed = branches.map((b) => b.params?.allowedValue);
    return branches.length > 0 && branches.every((b) => b.keyword === 'const')
      ? [{ ...e, keyword: 'enum', params: { allowedValues: allowed } }]
      : [{ ...e, message: 'is not any of the accepted forms' }];
  });
}

/**
 * Each refusal of the validator as the field it names (`merchants[3].customer_id`,
 * '' for the value as a whole) and what a person reads: the words of a 400's
 * `errors`, and of the command line's `import`, which checks with the same validator.
 */
export function describeRefusals(errors: AjvError[]): Array<{ path: string; message: string }> {
  return collapseUnions(errors).map((error) => ({ path: pathOf(error), message: messageOf(error) }));
}

const PARTS: Record<string, string> = {
  body: 'The body is',
  querystring: 'The query parameters are',
  params: 'The path parameters are',
  headers: 'The headers are',
};

/** Translates whatever was thrown into an AppError. */
export function toAppError(err: FastifyError | AppError | Error): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    // pathOf() cuts a field name short: an unknown parameter's name is input too.
    const errors: FieldError[] = describeRefusals(fe.validation).map(({ path, message }) => ({
      field: path || (fe.validationContext ?? 'request'),
      message,
    }));
    return new ValidationError(errors, `${PARTS[fe.validationContext ?? ''] ?? 'The request is'} not valid.`);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('malformed_json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('unsupported_media_type');
  }
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError('database_unavailable', undefined, 2);
  // Any other refusal of Fastify's (a body stream that failed) is the client's: a 400.
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
    return new AppError('bad_request');
  return new AppError('internal_error');
}

/** Echoed input is cut to this many characters: a 20 KB path must not come back in the answer. */
const MAX_ECHO = 80;

/** `text`, or its first MAX_ECHO characters and an ellipsis. */
export function clip(text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}...` : text;
}

/** The problem document of `error`; `instance` is absent when the request line could not be read. */
export function problemBody(error: AppError, requestId: string, instance?: string): Record<string, unknown> {
  return {
    type: `${TYPE_BASE}${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    ...(instance === undefined ? {} : { instance: clip(instance) }),
    code: error.code,
    request_id: requestId,
    ...(error.errors ? { errors: error.errors } : {}),
    ...error.extensions,
  };
}

/** The path the client asked for, `/api` included when it wrote it (src/lib/base-path.ts), without the query. */
export function requestPath(request: FastifyRequest): string {
  return request.originalUrl.split('?')[0] ?? request.originalUrl;
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError) {
  const body = problemBody(error, String(request.id), requestPath(request));
  return reply
    .code(error.status)
    .headers(error.headers)
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send(JSON.stringify(body));
}

/**
 * Overload and outages are expected states, not bugs, and come by thousands a
 * second: they are counted and logged once a second per code, not per request.
 */
function createRefusalLog(app: FastifyInstance) {
  const counts = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    for (const [code, count] of counts) app.log.warn({ code, status: 503, count }, 'requests refused: unavailable');
    counts.clear();
    timer = undefined;
  };
  app.addHook('onClose', async () => {
    clearTimeout(timer);
    flush();
  });
  return (code: string) => {
    counts.set(code, (counts.get(code) ?? 0) + 1);
    timer ??= setTimeout(flush, 1000).unref();
  };
}

export const problemDetailsPlugin = fp(async (app: FastifyInstance) => {
  const countRefusal = createRefusalLog(app);
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const error = toAppError(err);
    // A departed client's aborted body ("ECONNRESET", which reads as an outage) or dropped
    // work is no refusal of ours: client-closed.ts logs it once. A bug is still logged.
    if (error instanceof ClientClosedRequestError || hungUp(reply)) {
      if (error.status === 500) request.log.error({ err }, 'request failed');
      return sendProblem(request, reply, new ClientClosedRequestError());
    }
    if (error.status === 503) countRefusal(error.code);
    else if (error.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: error.code, status: error.status }, 'request refused');
    return sendProblem(request, reply, error);
  });
});
