/**
 * Compiled validators and serializers, shared by every app this process builds.
 * Compiling the routes' schemas (ajv, fast-json-stringify) is most of the time
 * buildApp takes; a second app in the same process (a second instance, each
 * test's app) reuses the functions the first one compiled. They are keyed by the
 * schema's JSON, not its object, because route schemas are partly rebuilt per
 * app (the 400 every route gets, Fastify's normalised headers), and a compiled
 * function depends on nothing but that JSON and the named schemas beside it,
 * which are the same constants in every app.
 *
 * Each is compiled on its route's first request, not when the app starts: a
 * process compiles only what its requests use, so an app is built in about half
 * the processor time (a test file uses a few routes of the hundred; docs/performance.md,
 * "The measurements behind the defaults"), and the first request of a route, once per process, pays the
 * milliseconds of its compile.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/** `compile(args)` once per distinct `key(args)` in this process. */
export function compiledOnce<A, F>(key: (args: A) => string, compile: (args: A) => F): (args: A) => F {
  const compiled = new Map<string, F>();
  return (args) => {
    const at = key(args);
    let found = compiled.get(at);
    if (found === undefined) {
      found = compile(args);
      compiled.set(at, found);
    }
    return found;
  };
}

/**
 * `compile()` on the first call of the returned function, not before. A compiled validator's `errors`
 * (ajv's, which Fastify reads off the function it called after a refusal) are read through.
 */
export function compiledOnFirstCall<F extends (data: unknown) => unknown>(compile: () => F): F {
  let compiled: F | undefined;
  const call = (data: unknown) => {
    compiled ??= compile();
    return compiled(data);
  };
  Object.defineProperty(call, 'errors', { get: () => (compiled as { errors?: unknown } | undefined)?.errors });
  return call as F;
}

type SerializerCompiler = ReturnType<ReturnType<typeof SerializerSelector>>;
type RouteDefinition = Parameters<SerializerCompiler>[0];

const defaultSerializerFactory = SerializerSelector();
const serializer = compiledOnce(
  ({ named, route }: { named: string; route: RouteDefinition; compile: SerializerCompiler }) =>
    `${named}\n${JSON.stringify(route.schema)}`,
  ({ route, compile }) => compile(route),
);

/** Fastify's default response serializer (fast-json-stringify), compiled once per schema and named schemas. */
export const sharedSerializers: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildSerializer: (externalSchemas: unknown, options: unknown) => {
      const compile = defaultSerializerFactory(externalSchemas, options as never);
      // By id: a named schema's content is the same constant in every app (src/schemas/common.ts).
      const named = Object.keys(externalSchemas ?? {}).join();
      return (route: RouteDefinition) => compiledOnFirstCall(() => serializer({ named, route, compile }));
    },
  },
};
