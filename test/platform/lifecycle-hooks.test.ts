/**
 * The hooks of src/lib/lifecycle-hooks.ts on a bare Fastify: when their work
 * waits, a failure is answered as Fastify answers an `async` hook's, and an
 * answer sent from the hook ends the lifecycle, whatever other hooks wait.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { requestHook, sendHook } from '../../src/lib/lifecycle-hooks.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('lifecycle hooks whose work waits', () => {
  const rejections: unknown[] = [];
  const unhandled = (reason: unknown) => rejections.push(reason);
  before(() => process.on('unhandledRejection', unhandled));
  after(() => process.off('unhandledRejection', unhandled));

  async function served(build: (app: FastifyInstance) => void, method: 'GET' | 'POST' = 'GET') {
    const app = Fastify();
    build(app);
    try {
      return await app.inject({ method, url: '/', payload: method === 'POST' ? {} : undefined });
    } finally {
      await app.close();
    }
  }

  it('an onSend hook: an answer that cannot be written after it is a 500, not a hang or an unhandled rejection', async () => {
    rejections.length = 0;
    const res = await served((app) => {
      app.addHook(
        'onSend',
        sendHook(() => tick()),
      );
      // Node refuses a header value above U+00FF when the head is written, after the hook.
      app.get('/', (_request, reply) => {
        reply.header('x-bad', 'caf\u0100').send('ok');
      });
    });
    assert.equal(res.statusCode, 500);
    assert.equal(rejections.length, 0);
  });

  it('an onSend hook: the payload goes on as it came, whatever the work resolves to', async () => {
    const res = await served((app) => {
      app.addHook(
        'onSend',
        sendHook(() => tick().then(() => 'not the payload')),
      );
      app.get('/', () => ({ kept: true }));
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { kept: true });
  });

  it('a request hook: work rejected without an error is a 500 and the handler never runs', async () => {
    let handled = 0;
    const res = await served((app) => {
      app.addHook(
        'preHandler',
        requestHook(() => tick().then(() => Promise.reject(undefined))),
      );
      app.get('/', () => {
        handled++;
        return 'handled';
      });
    });
    assert.equal(res.statusCode, 500);
    assert.equal(handled, 0);
  });

  it('a request hook that returns the answer it sent (a replay) ends the lifecycle, even beside a waiting onSend hook', async () => {
    let handled = 0;
    const res = await served((app) => {
      app.addHook('onSend', async () => {
        await tick();
      });
      app.addHook(
        'preValidation',
        requestHook((_request, reply) => tick().then(() => reply.code(201).send('replayed'))),
      );
      app.post('/', () => {
        handled++;
        return 'handled';
      });
    }, 'POST');
    await tick();
    assert.equal(res.statusCode, 201);
    assert.equal(res.body, 'replayed');
    assert.equal(handled, 0);
  });
});
