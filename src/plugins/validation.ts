/**
 * Two validators: query strings, params and headers arrive as text and are
 * coerced ("page=2" → 2); JSON bodies are checked as sent, so `"user": 1` or a
 * lone string where an array belongs is a 400, not silently converted.
 * Unknown query parameters are a 400 on every operation, including those that
 * take none: a misspelt `?dry_rn=true` must not apply a change.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { compiledOnce, compiledOnFirstCall } from '../lib/compiled-schemas.js';
import { NoQuery } from '../schemas/common.js';
import { problems } from '../schemas/problems.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
/**
 * multipleOfPrecision: `commission`'s multipleOf 0.0001 checked with a tolerance
 * of 1e-3 steps, above binary floating point's error up to its maximum (the
 * service then checks the decimals exactly).
 */
const common: Options = {
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strict: false,
  multipleOfPrecision: 3,
};

/**
 * A keyword that replaces the value it sits on with `replace(setting, value)`
 * (undefined: leave it), in place, as the route will then see it.
 */
function replacingKeyword<S>(
  ajv: Ajv,
  keyword: string,
  schemaType: 'boolean' | 'number',
  replace: (setting: S, value: unknown) => unknown,
): Ajv {
  return ajv.addKeyword({
    keyword,
    schemaType,
    modifying: true,
    errors: false,
    validate: (
      setting: S,
      data: unknown,
      _schema: unknown,
      where?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number },
    ) => {
      const replaced = replace(setting, data);
      if (replaced !== undefined && where?.parentData) where.parentData[where.parentDataProperty] = replaced;
      return true;
    },
  });
}

/**
 * `x-lowercase: true` (on every Uuid, src/schemas/common.ts): the value is
 * answered and compared in lower case, whatever case the client wrote, so every
 * route sees ids as the database returns them.
 */
const addLowercase = (ajv: Ajv) =>
  replacingKeyword<boolean>(ajv, 'x-lowercase', 'boolean', (enabled, data) =>
    enabled && typeof data === 'string' ? data.toLowerCase() : undefined,
  );

/**
 * `x-clamp-maximum: n` (on a listing's `size`, src/schemas/common.ts): a larger
 * number is not refused but served as n, so the route sees at most n.
 */
const addClamp = (ajv: Ajv) =>
  replacingKeyword<number>(ajv, 'x-clamp-maximum', 'number', (maximum, data) =>
    typeof data === 'number' && data > maximum ? maximum : undefined,
  );

/** An ajv with the formats and this service's keywords. */
const withKeywords = (ajv: Ajv): Ajv => addClamp(addLowercase(addFormats(ajv)));

/** The validator of JSON bodies; the command line checks its input with it too, so both accept the same. */
export function createStrictAjv(): Ajv {
  return withKeywords(new Ajv({ ...common, coerceTypes: false }));
}

/**
 * An integer in a query string or path is decimal digits. ajv's coercion takes
 * anything `Number()` reads ("0x10", "1e3", "1.0", " 5"), which the document's
 * `type: integer` does not admit: those are refused before it runs.
 */
const DECIMAL_INTEGER = /^-?[0-9]+$/;

function withDecimalIntegers(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => properties[name]?.type === 'integer');
  if (integers.length === 0) return validate;
  const checked = ((data: Record<string, unknown> | null) => {
    const bad = integers.find(
      (name) => typeof data?.[name] === 'string' && !DECIMAL_INTEGER.test(data[name] as string),
    );
    if (bad !== undefined) {
      const error: ErrorObject = {
        instancePath: `/${bad}`,
        schemaPath: `#/properties/${bad}/type`,
        keyword: 'type',
        params: { type: 'integer' },
        message: 'must be integer',
      };
      checked.errors = [error];
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return checked;
}

// One pair of validators per process (src/lib/compiled-schemas.ts): every app built here shares their compiled schemas.
const strict = createStrictAjv();
const coercing = withKeywords(new Ajv({ ...common, coerceTypes: 'array' }));
const namedSchemas = new Set<string>();
const validator = compiledOnce(
  ({ schema, httpPart }: { schema: unknown; httpPart?: string }) => `${httpPart === 'body'}\n${JSON.stringify(schema)}`,
  ({ schema, httpPart }) =>
    httpPart === 'body'
      ? strict.compile(schema as object)
      : withDecimalIntegers(schema, coercing.compile(schema as object)),
);

export const validationPlugin = fp(async (app: FastifyInstance) => {
  // Named schemas (app.addSchema, see src/schemas/common.ts) are known to both validators before the first compile.
  app.setValidatorCompiler(({ schema, httpPart }) => {
    for (const [id, named] of Object.entries(app.getSchemas())) {
      if (namedSchemas.has(id)) continue;
      namedSchemas.add(id);
      strict.addSchema(named as object, id);
      coercing.addSchema(named as object, id);
    }
    return compiledOnFirstCall(() => validator({ schema, httpPart }));
  });
  // Every route registered from here on that declares no query schema gets the
  // empty one, and its 400 in the document. Hidden routes (the docs UI) are not operations.
  app.addHook('onRoute', (route) => {
    const schema: FastifySchema & { hide?: boolean } = route.schema ?? {};
    if (schema.hide || schema.querystring) return;
    const response = schema.response as Record<number, unknown> | undefined;
    route.schema = {
      ...schema,
      querystring: NoQuery,
      ...(response && !response[400] ? { response: { ...response, ...problems('validation_failed') } } : {}),
    };
  });
});
