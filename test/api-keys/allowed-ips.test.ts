/**
 * Restricted keys, where from (contract section 22): allowed_ips of IPv4 and
 * IPv6 addresses and ranges, matched against the client address TRUST_PROXY
 * determines; refused with 403 ip_not_allowed that never shows the list.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { json, useTestApp } from '../helpers/app.js';
import { createKey, keysSnapshot, listKeys } from '../helpers/api-keys.js';
import { customerSession, issueKey } from '../helpers/fixtures.js';

const h = useTestApp();

/** GET /v1/users/me with `key`, from `remoteAddress`, with an optional X-Forwarded-For. */
const from = (app: FastifyInstance, key: string, remoteAddress: string, forwardedFor?: string) =>
  app.inject({
    method: 'GET',
    url: '/v1/users/me',
    remoteAddress,
    headers: { 'x-api-key': key, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
  });

function assertRefused(res: Awaited<ReturnType<typeof from>>, what: string, secret: string): void {
  assert.equal(res.statusCode, 403, `${what}: ${res.body}`);
  assert.equal(json(res).code, 'ip_not_allowed', what);
  assert.ok(!res.body.includes(secret), `${what}: the allowed list is not revealed`);
}

async function keyAllowing(allowedIps: string[], overrides = {}) {
  const { app, world, token } = await customerSession(h, overrides);
  const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId }, { allowed_ips: allowedIps });
  return { app, world, token, key: key.api_key };
}

describe('allowed_ips', () => {
  it('lets an address inside a range in and refuses one outside, without revealing the list', async () => {
    const { app, key } = await keyAllowing(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);
    assert.equal((await from(app, key, '203.0.113.9')).statusCode, 200);
    assert.equal((await from(app, key, '198.51.100.7')).statusCode, 200);
    assert.equal((await from(app, key, '2001:db8:1::5')).statusCode, 200);
    assertRefused(await from(app, key, '198.51.100.8'), 'a neighbour of the single address', '198.51.100.7');
    assertRefused(await from(app, key, '2001:db9::1'), 'an IPv6 address outside', '2001:db8');
  });

  it('does not take ::1 for 127.0.0.1, but an IPv4-mapped client is its IPv4 address', async () => {
    const { app, key } = await keyAllowing(['127.0.0.0/8', '10.0.0.0/8']);
    assertRefused(await from(app, key, '::1'), '::1 against IPv4 ranges', '127.0.0.0');
    assert.equal((await from(app, key, '::ffff:127.0.0.1')).statusCode, 200, 'the mapped form of 127.0.0.1');
    assert.equal((await from(app, key, '::ffff:10.1.2.3')).statusCode, 200);
    assertRefused(await from(app, key, '::ffff:11.0.0.1'), 'a mapped address outside', '10.0.0.0');
  });

  it('matches an IPv4 client against a range written in the mapped form, and ::1 only against itself', async () => {
    const { app, key } = await keyAllowing(['::ffff:10.0.0.0/104', '::1']);
    assert.equal((await from(app, key, '10.200.0.1')).statusCode, 200);
    assert.equal((await from(app, key, '::1')).statusCode, 200);
    assertRefused(await from(app, key, '127.0.0.1'), '127.0.0.1 is not ::1', '::1');
  });

  it('counts an address that cannot be parsed as outside every range', async () => {
    const { app, key } = await keyAllowing(['0.0.0.0/0', '::/0'], {
      trustProxy: loadConfig({ TRUST_PROXY: '1' }).trustProxy,
    });
    assert.equal((await from(app, key, '10.0.0.1', '203.0.113.7')).statusCode, 200, 'anywhere, when parseable');
    assertRefused(await from(app, key, '10.0.0.1', 'not-an-address'), 'garbage in X-Forwarded-For', '0.0.0.0');
    assertRefused(await from(app, key, '10.0.0.1', '999.1.1.1'), 'an impossible IPv4 address', '0.0.0.0');
    assertRefused(await from(app, key, '10.0.0.1', '10'), 'a bare number, not an address', '0.0.0.0');
  });

  it('is matched against the client TRUST_PROXY determines: hops counted from the right', async () => {
    const one = loadConfig({ TRUST_PROXY: '1' }).trustProxy;
    const { app, key } = await keyAllowing(['203.0.113.0/24'], { trustProxy: one });
    assert.equal((await from(app, key, '10.0.0.1', '203.0.113.7')).statusCode, 200, 'behind one proxy');
    assertRefused(
      await from(app, key, '10.0.0.1', '203.0.113.7, 198.51.100.1'),
      'a client writing the allowed address into its own X-Forwarded-For',
      '203.0.113',
    );
    assertRefused(
      await from(app, key, '203.0.113.9', '198.51.100.1'),
      'the proxy itself is not the client',
      '203.0.113',
    );
  });

  it('with two hops trusted, the client is the third address from the right', async () => {
    const two = loadConfig({ TRUST_PROXY: '2' }).trustProxy;
    const { app, key } = await keyAllowing(['203.0.113.0/24'], { trustProxy: two });
    assert.equal((await from(app, key, '10.0.0.2', '198.51.100.9, 203.0.113.7, 10.0.0.1')).statusCode, 200);
    assertRefused(
      await from(app, key, '10.0.0.2', '203.0.113.7, 198.51.100.9, 10.0.0.1'),
      'third from the right',
      '203.0.113',
    );
  });

  it('without TRUST_PROXY, is matched against the socket whatever X-Forwarded-For says', async () => {
    const { app, key } = await keyAllowing(['203.0.113.0/24']);
    assertRefused(await from(app, key, '10.0.0.1', '203.0.113.7'), 'X-Forwarded-For untrusted', '203.0.113');
  });

  it('are stored and listed in canonical form', async () => {
    const { app, world, token } = await customerSession(h);
    const res = await createKey(
      app,
      { token },
      {
        user: 'a@alpha.test',
        customer_id: world.customerId,
        allowed_ips: ['10.1.2.3/8', '2001:DB8:0:0::/32', '10.0.0.0/8'],
      },
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(json(res).allowed_ips, ['10.0.0.0/8', '2001:db8::/32']);
    assert.deepEqual(json(await listKeys(app, { token })).data[0].allowed_ips, ['10.0.0.0/8', '2001:db8::/32']);
  });

  it('refuses what is not an address or range, and more than 20, naming the item; nothing is created', async () => {
    const { app, world, token } = await customerSession(h);
    const before = await keysSnapshot(h.db.current.database);
    for (const [bad, index] of [
      [['10.0.0.0/33'], 0],
      [['10.0.0.1', '::1/129'], 1],
      [['203.0.113.0/24', 'example.com'], 1],
      [['10.0.0.0/8/8'], 0],
      [['0x0a.0.0.1'], 0],
      [['fe80::1%eth0'], 0],
    ] as const) {
      const res = await createKey(
        app,
        { token },
        { user: 'a@alpha.test', customer_id: world.customerId, allowed_ips: bad },
      );
      assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
      assert.equal(json(res).code, 'validation_failed');
      assert.equal(json(res).errors[0].field, `allowed_ips[${index}]`, String(bad));
      assert.ok(json(res).errors[0].message.includes(bad[index]), 'the message names the item');
    }
    const many = Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`);
    const tooMany = await createKey(
      app,
      { token },
      { user: 'a@alpha.test', customer_id: world.customerId, allowed_ips: many },
    );
    assert.equal(tooMany.statusCode, 400);
    assert.equal(json(tooMany).errors[0].field, 'allowed_ips');
    assert.equal(await keysSnapshot(h.db.current.database), before);
  });
});
