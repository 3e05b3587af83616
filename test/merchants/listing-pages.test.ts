/**
 * The merchant listing in the platform's shape (contract section 20): a page
 * of 10,000 holds 10,000 distinct merchants in order, a client reads it as the
 * platform's Kotlin point-of-sale app does (`_embedded.merchants`), and a
 * client that hangs up mid-page leaves no connection checked out.
 */
import assert from 'node:assert/strict';
import { get, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { merchants } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { ON_POSTGRES } from '../helpers/database.js';
import { customerSession, uuid } from '../helpers/fixtures.js';
import { portOf } from '../helpers/raw-http.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

/**
 * The Kotlin app's decoding, kotlinx.serialization with ignoreUnknownKeys:
 *
 *   @Serializable data class MerchantsResponse(@SerialName("_embedded") val embedded: Embedded, val page: PageInfo)
 *   @Serializable data class Embedded(val merchants: List<MerchantDto>)
 *   @Serializable data class MerchantDto(val id: String, val name: String, val status: String,
 *       @SerialName("business_name") val businessName: String? = null, val tax: TaxDto? = null,
 *       @SerialName("settlement_condition") val settlementCondition: SettlementDto? = null)
 *   @Serializable data class TaxDto(val id: String, val type: String? = null)
 *   @Serializable data class SettlementDto(@SerialName("cbu_or_cvu") val cbuOrCvu: String, ...)
 *   @Serializable data class PageInfo(val size: Int, @SerialName("total_elements") val totalElements: Long,
 *       @SerialName("total_pages") val totalPages: Int, val number: Int)
 *
 * Each check below is a MissingFieldException or a type mismatch on the device.
 */
function decodeLikeKotlin(body: string) {
  const root = JSON.parse(body);
  const field = (o: any, name: string, type: string, nullable = false) => {
    const v = o?.[name];
    if (v === undefined && nullable) return null;
    if (v === null && nullable) return null;
    assert.equal(typeof v, type, `${name}: ${type} expected, got ${JSON.stringify(v)}`);
    return v;
  };
  const embedded = field(root, '_embedded', 'object');
  assert.ok(Array.isArray(embedded.merchants), '_embedded.merchants: a list');
  const page = field(root, 'page', 'object');
  for (const n of ['size', 'total_elements', 'total_pages', 'number'])
    assert.ok(Number.isInteger(field(page, n, 'number')), `page.${n}: an integer`);
  const merchantsDecoded = embedded.merchants.map((m: any) => {
    const tax = field(m, 'tax', 'object', true);
    if (tax !== null) field(tax, 'id', 'string');
    const settlement = field(m, 'settlement_condition', 'object', true);
    if (settlement !== null) field(settlement, 'cbu_or_cvu', 'string');
    return {
      id: field(m, 'id', 'string') as string,
      name: field(m, 'name', 'string') as string,
      status: field(m, 'status', 'string') as string,
      businessName: field(m, 'business_name', 'string', true) as string | null,
    };
  });
  return { merchants: merchantsDecoded, page };
}

/** `count` merchants of the customer (with `additionalInfo` to make them larger), one second apart, all older than the world's: the oldest first. */
async function manyMerchants(customerId: string, count: number, additionalInfo?: string): Promise<string[]> {
  const ids = Array.from({ length: count }, () => uuid('d'));
  const start = Date.UTC(2020, 0, 1);
  for (let from = 0; from < count; from += 2000)
    await h.db.current.database.db.insert(merchants).values(
      ids.slice(from, from + 2000).map((id, i) => ({
        id,
        customerId,
        name: `Shop ${from + i}`,
        additionalInfo,
        createdAt: new Date(start + (from + i) * 1000),
      })),
    );
  return ids;
}

describe('GET /v1/merchants: pages of 10,000', () => {
  it('answers 10,000 distinct merchants in order, decoded as the Kotlin app decodes them, and the rest on the next page', async () => {
    const { app, world, token } = await customerSession(h);
    const oldestFirst = await manyMerchants(world.customerId, 10_001);
    const newestFirst = [...oldestFirst].reverse();

    const first = await app.inject({ url: '/api/v1/merchants?size=10000', headers: bearer(token) });
    assert.equal(first.statusCode, 200);
    assert.match(String(first.headers['content-type']), /^application\/json/);
    const decoded = decodeLikeKotlin(first.body);
    assert.deepEqual(decoded.page, { size: 10_000, total_elements: 10_003, total_pages: 2, number: 0 });
    const ids = decoded.merchants.map((m: { id: string }) => m.id);
    assert.equal(ids.length, 10_000);
    assert.equal(new Set(ids).size, 10_000, 'distinct');
    // The world's two merchants are the newest; then these, newest first.
    assert.deepEqual(new Set(ids.slice(0, 2)), new Set(world.merchantIds));
    assert.deepEqual(ids.slice(2), newestFirst.slice(0, 9_998));

    const second = decodeLikeKotlin(
      (await app.inject({ url: '/v2/merchants?size=10000&page=1', headers: bearer(token) })).body,
    );
    assert.deepEqual(second.page, { size: 10_000, total_elements: 10_003, total_pages: 2, number: 1 });
    assert.deepEqual(
      second.merchants.map((m: { id: string }) => m.id),
      newestFirst.slice(9_998),
    );
    // Batches meet without a gap or a repeat whatever the page size.
    const small = json(await app.inject({ url: '/v1/merchants?size=777&page=3', headers: bearer(token) }));
    assert.deepEqual(
      small._embedded.merchants.map((m: { id: string }) => m.id),
      [...world.merchantIds.slice().sort().reverse(), ...newestFirst].slice(3 * 777, 4 * 777),
    );
  });
});

describe('GET /v1/merchants: a client that hangs up mid-page', () => {
  it('leaves no connection checked out of the pool, and the service answers on', async () => {
    const { app, world, token } = await customerSession(h);
    await manyMerchants(world.customerId, 6_000);
    await app.listen({ host: '127.0.0.1', port: 0 });
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      const request = get(
        {
          host: '127.0.0.1',
          port: portOf(app),
          path: '/v1/merchants?size=10000',
          headers: { authorization: `Bearer ${token}` },
        },
        (response) => {
          assert.equal(response.statusCode, 200);
          response.once('data', (chunk: Buffer) => {
            received = chunk.length;
            request.destroy();
            resolve();
          });
        },
      );
      request.on('error', (err) => (received > 0 ? resolve() : reject(err)));
    });
    assert.ok(received > 0 && received < 1_000_000, `hung up after ${received} bytes of a page of megabytes`);
    if (ON_POSTGRES)
      await waitFor(() => {
        const pool = h.db.current.database.poolStats!();
        return pool.total - pool.idle === 0 && pool.waiting === 0;
      }, 'every connection back in the pool');
    // The embedded database has one connection: it would hang here if the page kept it.
    const next = await app.inject({ url: '/v1/merchants?size=1', headers: bearer(token) });
    assert.equal(next.statusCode, 200);
    assert.equal(json(next)._embedded.merchants.length, 1);
  });
});

/** Every pooled connection idle and nobody waiting for one (PostgreSQL; the embedded database has one connection). */
async function poolAtRest() {
  if (!ON_POSTGRES) return;
  await waitFor(() => {
    const pool = h.db.current.database.poolStats!();
    return pool.total - pool.idle === 0 && pool.waiting === 0;
  }, 'every connection back in the pool');
}

/** feegate_listing_pages_waiting, scraped from the metrics port. */
async function pagesWaiting(app: FastifyInstance): Promise<number> {
  const { port } = app.metricsServer!.address() as AddressInfo;
  // A connection per scrape: the metrics server may close an idle one just as it is reused.
  const text = await new Promise<string>((resolve, reject) =>
    get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve(body));
    }).on('error', reject),
  );
  const line = text.split('\n').find((l) => l.startsWith('feegate_listing_pages_waiting '));
  return Number(line?.split(' ')[1]);
}

/**
 * A listing of 10,000 large merchants served one page at a time, its one turn
 * held by a GET whose client read a chunk and stopped: megabytes more than any
 * socket buffer holds, so that page waits for its reader until it hangs up.
 */
async function oneTurnHeld(test: TestContext) {
  const { app, world, token } = await customerSession(h, { listingConcurrentPages: 1, metricsPort: 0 });
  await manyMerchants(world.customerId, 10_000, 'x'.repeat(1000));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const options = { host: '127.0.0.1', port: portOf(app), headers: { authorization: `Bearer ${token}` } };
  const stalled = get({ ...options, path: '/v1/merchants?size=10000' });
  stalled.on('error', () => {});
  // Closing the app waits for its connections: a failed assertion must not leave this one open.
  test.after(() => stalled.destroy());
  await new Promise<void>((resolve) =>
    stalled.once('response', (response) =>
      response.once('data', () => {
        response.pause();
        resolve();
      }),
    ),
  );
  return { app, token, options, stalled };
}

describe('HEAD /v1/merchants?size=10000', () => {
  it('answers the headers of the page with no body, reading none of it: no turn taken, no connection left behind', async (t) => {
    const { app, token, options, stalled } = await oneTurnHeld(t);
    const head = await new Promise<{ status: number; type: string; body: number }>((resolve, reject) => {
      const request = httpRequest({ ...options, method: 'HEAD', path: '/v1/merchants?size=10000' }, (response) => {
        let body = 0;
        response.on('data', (chunk: Buffer) => {
          body += chunk.length;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode!, type: String(response.headers['content-type']), body }),
        );
      });
      request.on('error', reject);
      request.end();
    });
    assert.deepEqual(head, { status: 200, type: 'application/json; charset=utf-8', body: 0 });
    assert.equal(await pagesWaiting(app), 0, 'the HEAD is not waiting to read the page');
    stalled.destroy();
    await poolAtRest();
    const next = await app.inject({ url: '/v1/merchants?size=10000', headers: bearer(token) });
    assert.equal(next.statusCode, 200);
    assert.equal(json(next)._embedded.merchants.length, 10_000);

    const refused = await app.inject({ method: 'HEAD', url: '/v1/merchants?size=10000' });
    assert.equal(refused.statusCode, 401, 'HEAD is authenticated as GET is');
  });
});

describe('GET /v1/merchants: pages read at once (LISTING_CONCURRENT_PAGES)', () => {
  it('queues pages beyond the limit; one whose client hangs up leaves the queue unread; the rest are served whole', async (t) => {
    const { app, token, options, stalled } = await oneTurnHeld(t);
    const gone = get({ ...options, path: '/v1/merchants?size=10000' });
    gone.on('error', () => {});
    await waitFor(async () => (await pagesWaiting(app)) === 1, 'the second page waits for its turn');
    gone.destroy();
    await waitFor(async () => (await pagesWaiting(app)) === 0, 'the page whose client left is out of the queue');

    const pages = Array.from({ length: 3 }, () =>
      app.inject({ url: '/v1/merchants?size=10000', headers: bearer(token) }),
    );
    await waitFor(async () => (await pagesWaiting(app)) === 3, 'three pages wait behind the held one');
    stalled.destroy();
    for (const page of await Promise.all(pages)) {
      assert.equal(page.statusCode, 200);
      const ids = json(page)._embedded.merchants.map((m: { id: string }) => m.id);
      assert.equal(new Set(ids).size, 10_000);
    }
    await poolAtRest();
    assert.equal(await pagesWaiting(app), 0);
  });
});
