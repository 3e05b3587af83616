/**
 * SSRF, completed (contract section 19): a webhook host must be a global
 * unicast address. One address from every range of the IANA special-purpose
 * registries (and multicast, and IPv6 outside 2000::/3) is refused as a URL's
 * literal host at creation and as a resolved name's answer at delivery; global
 * addresses and their neighbours just outside the ranges are accepted. Nothing
 * connects: creation never does (the worker is off), and the delivery-time
 * check is called on its own with DNS stubbed.
 */
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { afterEach, describe, it, mock } from 'node:test';
import { resolveTarget, UrlRefusedError } from '../../src/features/webhooks/webhook-url-policy.js';
import { json, useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';
import { createWebhook, SECRET, webhooksSnapshot } from '../helpers/webhooks.js';

const h = useTestApp();
afterEach(() => mock.restoreAll());

/** An address inside each refused range, named by the registry entry it stands for. */
const HOSTILE: Array<[string, string]> = [
  ['0.1.2.3', '"this network" 0.0.0.0/8'],
  ['0.0.0.0', 'unspecified'],
  ['10.1.2.3', 'private 10/8'],
  ['100.64.0.1', 'shared address space 100.64/10'],
  ['100.127.255.254', 'shared address space, its end'],
  ['127.0.0.2', 'loopback'],
  ['169.254.169.254', 'link local (cloud metadata)'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.254', 'private 172.16/12, its end'],
  ['192.0.0.9', 'IETF protocol assignments (PCP anycast)'],
  ['192.0.0.170', 'IETF protocol assignments (NAT64 discovery)'],
  ['192.0.2.1', 'documentation TEST-NET-1'],
  ['192.31.196.1', 'AS112-v4'],
  ['192.52.193.1', 'AMT'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['192.168.1.1', 'private 192.168/16'],
  ['192.175.48.1', 'direct delegation AS112'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.254', 'benchmarking, its end'],
  ['198.51.100.1', 'documentation TEST-NET-2'],
  ['203.0.113.1', 'documentation TEST-NET-3'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast (SSDP)'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'limited broadcast'],
  ['::', 'IPv6 unspecified'],
  ['::1', 'IPv6 loopback'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::10.0.0.1', 'IPv4-compatible private'],
  ['::8.8.8.8', 'IPv4-compatible, even of a public address'],
  ['::2', 'reserved ::/8'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:8.8.8.8', 'IPv4-mapped, even of a public address'],
  ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
  ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
  ['64:ff9b:1::1', 'local-use NAT64'],
  ['100::1', 'discard-only'],
  ['100:0:0:1::1', 'dummy IPv6 prefix'],
  ['2001::1', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, a real-looking one'],
  ['2001:1::1', 'IETF protocol assignments (PCP anycast)'],
  ['2001:2::1', 'benchmarking'],
  ['2001:3::1', 'AMT'],
  ['2001:4:112::1', 'AS112-v6'],
  ['2001:10::1', 'deprecated ORCHID'],
  ['2001:20::1', 'ORCHIDv2'],
  ['2001:30::1', 'drone remote ID'],
  ['2001:1ff::1', 'IETF protocol assignments 2001::/23, its end'],
  ['2001:db8::1', 'documentation'],
  ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
  ['2002:a00:1::1', '6to4 of 10.0.0.1'],
  ['2620:4f:8000::1', 'direct delegation AS112'],
  ['3fff::1', 'documentation 3fff::/20'],
  ['5f00::1', 'SRv6 SIDs'],
  ['4000::1', 'outside 2000::/3'],
  ['fc00::1', 'unique local'],
  ['fd00::1', 'unique local'],
  ['fe80::1', 'link local'],
  ['fec0::1', 'deprecated site local'],
  ['ff02::1', 'multicast'],
];

/** Global unicast, several just outside a refused range. */
const GLOBAL = [
  '8.8.8.8',
  '1.1.1.1',
  '100.63.255.255',
  '100.128.0.1',
  '172.15.255.254',
  '172.32.0.1',
  '192.0.1.1',
  '198.17.255.254',
  '198.20.0.1',
  '223.255.255.254',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2001:200::1',
  '2620:4f:8001::1',
  '3fff:1000::1',
];

const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);
const policy = { allowHttp: true, allowedHosts: [] };

/** Stands in for the resolver: every name resolves to `address` (no query leaves the process). */
function resolvingTo(address: string) {
  const lookups: string[] = [];
  mock.method(dns.promises, 'lookup', async (host: string) => {
    lookups.push(host);
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  });
  return lookups;
}

describe('webhook URLs: global unicast only', () => {
  it('refuses http://[::127.0.0.1]/ (400 webhook_url_not_allowed), writing nothing', async () => {
    const { app, token } = await customerSession(h, { webhookAllowHttp: true });
    const before = await webhooksSnapshot(h.db.current.database);
    const response = await createWebhook(
      app,
      { token },
      {
        notification_url: 'http://[::127.0.0.1]/',
        notification_type: ['API_KEY_REVOKED'],
        secret_key: SECRET,
      },
    );
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(json(response).code, 'webhook_url_not_allowed');
    assert.equal(json(response).errors[0].field, 'notification_url');
    assert.equal(await webhooksSnapshot(h.db.current.database), before);
  });

  it('refuses a literal host in every special-purpose range, and accepts global ones', async () => {
    const { app, token } = await customerSession(h, { webhookAllowHttp: true });
    const before = await webhooksSnapshot(h.db.current.database);
    const create = (address: string) =>
      createWebhook(
        app,
        { token },
        {
          notification_url: `https://${literal(address)}/hook`,
          notification_type: ['API_KEY_REVOKED'],
          secret_key: SECRET,
        },
      );
    for (const [address, range] of HOSTILE) {
      const response = await create(address);
      assert.equal(response.statusCode, 400, `${address} (${range})`);
      assert.equal(json(response).code, 'webhook_url_not_allowed', `${address} (${range})`);
    }
    assert.equal(await webhooksSnapshot(h.db.current.database), before, 'no refused URL wrote anything');
    for (const address of GLOBAL) assert.equal((await create(address)).statusCode, 201, address);
  });

  it('refuses, before connecting, a name that resolves into any special-purpose range', async () => {
    for (const [address, range] of HOSTILE) {
      const lookups = resolvingTo(address);
      await assert.rejects(
        resolveTarget(new URL('https://hooks.example.com/hook'), policy),
        (err: unknown) => err instanceof UrlRefusedError && err.message.includes('resolves to a non-public address'),
        `${address} (${range})`,
      );
      assert.deepEqual(lookups, ['hooks.example.com']);
      mock.restoreAll();
    }
  });

  it('connects to a global address a name resolves to; an allowed host may still resolve to loopback', async () => {
    for (const address of GLOBAL) {
      resolvingTo(address);
      assert.deepEqual(await resolveTarget(new URL('https://hooks.example.com/hook'), policy), {
        address,
        family: address.includes(':') ? 6 : 4,
      });
      mock.restoreAll();
    }
    resolvingTo('::127.0.0.1');
    const allowed = { allowHttp: true, allowedHosts: ['receiver.test:8080'] };
    assert.equal((await resolveTarget(new URL('http://receiver.test:8080/'), allowed)).address, '::127.0.0.1');
    await assert.rejects(resolveTarget(new URL('http://receiver.test:8081/'), allowed), UrlRefusedError);
  });
});
