/**
 * Test sends per customer per minute (contract section 19, "Fair webhooks"):
 * POST /v1/webhooks/{id}/test and the mock payment notification together, 10 a
 * minute per customer by default (WEBHOOK_TEST_SENDS_PER_CUSTOMER_PER_MINUTE);
 * the 11th is 429 rate_limited with Retry-After and queues nothing; another
 * customer is not affected; instances share the count through Redis.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, count, eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { domainEvents } from '../../src/db/schema.js';
import { json, secondInstance, useTestApp } from '../helpers/app.js';
import { customerSession, loginAs } from '../helpers/fixtures.js';
import { NEEDS_REDIS, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { subscribe, webhookRequest } from '../helpers/webhooks.js';

const h = useTestApp();
const URL_OK = 'https://hooks.example.com/feegate';

/** The customer's WEBHOOK_TEST events: what a test send queues (the worker is off, so they stay in the outbox). */
async function testEvents(customerId: string): Promise<number> {
  const [row] = await h.db.current.database.db
    .select({ n: count() })
    .from(domainEvents)
    .where(and(eq(domainEvents.customerId, customerId), eq(domainEvents.type, 'WEBHOOK_TEST')));
  return row!.n;
}

function assertRateLimited(response: LightMyRequestResponse, max: number) {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(json(response).code, 'rate_limited');
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${response.headers['retry-after']}`);
  assert.equal(response.headers['ratelimit-limit'], String(max));
}

async function setup(overrides = {}) {
  const { app, world, token } = await customerSession(h, overrides);
  const hooks = [await subscribe(app, { token }, URL_OK), await subscribe(app, { token }, `${URL_OK}/2`)];
  const send = (instance = app, i = 0) =>
    i % 2 === 0
      ? webhookRequest(instance, { token }, 'POST', `/v1/webhooks/${hooks[0]}/test`)
      : webhookRequest(instance, { token }, 'POST', '/v1/webhooks/mock/send-payment-notification');
  return { app, world, token, send };
}

describe('test sends per customer per minute', () => {
  it('takes 10 (both paths together); the 11th is 429 rate_limited with Retry-After and queues nothing', async () => {
    const { app, world, send } = await setup();
    for (let i = 0; i < 10; i++) assert.equal((await send(app, i)).statusCode, 202, `send ${i + 1}`);
    // 5 single tests and 5 mock notifications to both subscriptions.
    assert.equal(await testEvents(world.customerId), 15);
    assertRateLimited(await send(app, 10), 10);
    assertRateLimited(await send(app, 11), 10);
    assert.equal(await testEvents(world.customerId), 15, 'the refused sends queued nothing');

    const other = (await loginAs(app, world.otherLogin)).access_token;
    const theirs = await subscribe(app, { token: other }, URL_OK);
    const response = await webhookRequest(app, { token: other }, 'POST', `/v1/webhooks/${theirs}/test`);
    assert.equal(response.statusCode, 202, 'another customer is not affected');
    assert.equal(await testEvents(world.otherCustomerId), 1);
  });

  it('follows its setting', async () => {
    const limited = await setup({ webhookTestSendsPerCustomerPerMinute: 2 });
    for (let i = 0; i < 2; i++) assert.equal((await limited.send(limited.app, i)).statusCode, 202);
    assertRateLimited(await limited.send(limited.app, 2), 2);
  });

  it('0 turns it off', async () => {
    const { app, send } = await setup({ webhookTestSendsPerCustomerPerMinute: 0 });
    for (let i = 0; i < 15; i++) assert.equal((await send(app, i)).statusCode, 202);
  });

  it('is shared by the instances through Redis', { skip: NEEDS_REDIS }, async () => {
    const config = {
      webhookTestSendsPerCustomerPerMinute: 3,
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: uniquePrefix(),
    };
    const { app, send } = await setup(config);
    const second = await secondInstance(h, config);
    try {
      for (const [i, instance] of [app, second, app].entries()) assert.equal((await send(instance, i)).statusCode, 202);
      assertRateLimited(await send(second, 3), 3);
    } finally {
      await second.close();
    }
  });
});
