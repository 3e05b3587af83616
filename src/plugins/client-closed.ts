/**
 * A request whose connection closes before its answer is sent gets one log
 * line saying so: `client_closed` with status 499 (nginx's "client closed
 * request") when the client hung up, `request_timeout` 408 when this server
 * gave up waiting for the request. Whatever its handler or body parser failed
 * with afterwards (an aborted body, a dropped query) is not logged as an error
 * of ours: see the error handler in problem-details.ts.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { onClosedEarly } from '../lib/request-context.js';

export const clientClosedPlugin = fp(async (app: FastifyInstance) => {
  // A callback, not an async function: no promise per request (lib/lifecycle-hooks.ts says why that matters).
  app.addHook('onRequest', (request, reply, done) => {
    onClosedEarly(request, reply, (status) => {
      const [code, message] =
        status === 408
          ? ['request_timeout', 'request did not arrive in time; connection closed']
          : ['client_closed', 'client closed the connection before the answer'];
      request.log.info({ code, status, responseTime: reply.elapsedTime }, message);
    });
    done();
  });
});
