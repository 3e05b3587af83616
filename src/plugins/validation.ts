/**
 * Two validators: query strings, params and headers arrive as text and are
 * coerced ("page=2" → 2); JSON bodies are checked as sent, so `"user": 1` or a
 * lone string where an array belongs is a 400, not silently converted.
 */
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const common: Options = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false };

export const validationPlugin = fp(async (app: FastifyInstance) => {
  const strict = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const coercing = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
});
