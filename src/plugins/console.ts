/**
 * Serves the back-office console (console/, built by Vite into dist/console) at
 * /console. Static files only: the console holds no server-side state and calls
 * the public API like any integrator. Hashed assets are immutable; index.html is
 * revalidated on every load so a new build is picked up at once. Deep links of
 * the single-page app fall back to index.html.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** dist/console beside the bundle (dist/feegate.mjs) or, from the sources, at the repository root. */
export function defaultConsoleRoot(): string {
  const candidates = [new URL('./console/', import.meta.url), new URL('../../dist/console/', import.meta.url)];
  const found = candidates.find((url) => existsSync(new URL('index.html', url)));
  return fileURLToPath(found ?? candidates[candidates.length - 1]!);
}

export const CONSOLE_PATH = '/console';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

export const consolePlugin = fp(async (app: FastifyInstance, options: { root?: string }) => {
  const root = options.root ?? defaultConsoleRoot();
  if (!existsSync(`${root}/index.html`)) {
    app.log.warn({ root }, 'console not built (npm run build); /console is not served');
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: `${CONSOLE_PATH}/`,
    wildcard: false,
    index: false,
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('cache-control', path.includes('/assets/') ? IMMUTABLE : REVALIDATE);
    },
  });
  const sendIndex = (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.header('cache-control', REVALIDATE).sendFile('index.html', root, { cacheControl: false });
  app.get(CONSOLE_PATH, { schema: { hide: true } }, (_request, reply) => reply.redirect(`${CONSOLE_PATH}/`, 301));
  app.get(`${CONSOLE_PATH}/`, { schema: { hide: true } }, sendIndex);
  // Any other path under /console that is not a built file: a deep link of the SPA.
  app.get(`${CONSOLE_PATH}/*`, { schema: { hide: true } }, sendIndex);
});
