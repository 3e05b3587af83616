/**
 * Two validators: query strings, params and headers arrive as text and are
 * coerced ("page=2" → 2); JSON bodies are checked as sent, so `"user": 1` or a
 * lone string where an array belongs is a 400, not silently converted.
 * Unknown query parameters are a 400 on every operation, including those that
 * take none: a misspelt `?dry_rn=true` must not apply a change.
 */
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { NoQuery, problems } from '../schemas/common.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const common: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };

/** The validator of JSON bodies; the command line checks its input with it too, so both accept the same. */
export function createStrictAjv(): Ajv {
  return addFormats(new Ajv({ ...common, coerceTypes: false }));
}

export const validationPlugin = fp(async (app: FastifyInstance) => {
  const strict = createStrictAjv();
  const coercing = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  // Named schemas (app.addSchema, see src/schemas/common.ts) are known to both validators before the first compile.
  const shared = new Set<string>();
  app.setValidatorCompiler(({ schema, httpPart }) => {
    for (const [id, named] of Object.entries(app.getSchemas())) {
      if (shared.has(id)) continue;
      shared.add(id);
      strict.addSchema(named as object, id);
      coercing.addSchema(named as object, id);
    }
    return (httpPart === 'body' ? strict : coercing).compile(schema);
  });
  // Every route registered from here on that declares no query schema gets the
  // empty one, and its 400 in the document. Hidden routes (the docs UI) are not operations.
  app.addHook('onRoute', (route) => {
    const schema: FastifySchema & { hide?: boolean } = route.schema ?? {};
    if (schema.hide || schema.querystring) return;
    const response = schema.response as Record<number, unknown> | undefined;
    route.schema = { ...schema, querystring: NoQuery, ...(response && !response[400] ? { response: { ...response, ...problems(400) } } : {}) };
  });
});
