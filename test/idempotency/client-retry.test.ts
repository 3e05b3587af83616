/**
 * The generated client over real HTTP: it sends a fresh Idempotency-Key with
 * every POST, so a fetch that gives up waiting and sends the same request again
 * gets one key, however the first attempt ended.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, isNotNull } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { createFeegateClient } from '../../clients/typescript/index.js';
import { apiKeys, idempotencyKeys } from '../../src/db/schema.js';
import { useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const database = () => h.db.current.database;

async function listening(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

const claims = async () => (await database().db.select({ n: count() }).from(idempotencyKeys))[0]!.n;
const answered = async () =>
  (await database().db.select({ n: count() }).from(idempotencyKeys).where(isNotNull(idempotencyKeys.status)))[0]!.n > 0;

/**
 * A fetch that loses its first attempt's answer (it stops waiting once the
 * service has the request, as a client timeout does), then sends the same
 * request again until an answer other than 409 in use comes, as Retry-After asks.
 */
function timingOutFetch(sentKeys: string[]): typeof fetch {
  let attempts = 0;
  return async (input, init) => {
    const request = new Request(input as Request, init);
    const send = (signal?: AbortSignal) => {
      sentKeys.push(request.headers.get('idempotency-key') ?? '');
      return fetch(request.clone(), { signal });
    };
    if (attempts++ === 0) {
      const timeout = new AbortController();
      const lost = send(timeout.signal).catch(() => undefined);
      await waitFor(async () => (await claims()) > 0, 'the service never received the first attempt');
      timeout.abort();
      await lost;
    }
    for (;;) {
      const answer = await send();
      if (answer.status !== 409) return answer;
      assert.equal(answer.headers.get('retry-after'), '1');
      // Rather than a second's pause: until the first attempt's answer is stored, which is what Retry-After waits for.
      await waitFor(answered, 'the first attempt was never answered');
    }
  };
}

describe('Idempotency-Key: the generated client', () => {
  it('a client that times out and sends the request again gets one key', async () => {
    const { app, world, token } = await customerSession(h);
    const baseUrl = await listening(app);
    const sentKeys: string[] = [];
    const feegate = createFeegateClient(baseUrl, { accessToken: token, fetch: timingOutFetch(sentKeys) });
    const before = (await database().db.select({ n: count() }).from(apiKeys))[0]!.n;
    const created = await feegate.POST('/v1/api-keys', {
      body: { user: 'integration@alpha.test', customer_id: world.customerId },
    });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    assert.ok(sentKeys.length >= 2, 'the request was sent again');
    assert.equal(new Set(sentKeys).size, 1, 'every attempt carried the same key');
    assert.match(sentKeys[0]!, /^[0-9a-f]{32}$/);
    const keys = await database().db.select().from(apiKeys);
    assert.equal(keys.length, before + 1, 'one key');
    assert.ok(keys.some((k) => k.id === created.data!.id));
  });

  it('sends a fresh key with each call', async () => {
    const { app, world, token } = await customerSession(h);
    const feegate = createFeegateClient(await listening(app), { accessToken: token });
    const body = { user: 'integration@alpha.test', customer_id: world.customerId };
    const first = await feegate.POST('/v1/api-keys', { body });
    const second = await feegate.POST('/v1/api-keys', { body });
    assert.equal(second.response.headers.get('idempotent-replayed'), null);
    assert.notEqual(first.data!.id, second.data!.id);
    assert.equal(await claims(), 2);
  });
});
