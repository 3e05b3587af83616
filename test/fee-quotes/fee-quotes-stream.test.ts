/**
 * POST /v1/fee-quotes with NDJSON: one answer line per transaction line, in
 * order; a bad line answers an error on its line and the stream goes on; a
 * reader that pauses stops the service reading the body; a client that hangs
 * up frees its connection and leaves the pool whole.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { useTestApp } from '../helpers/app.js';
import { uuid } from '../helpers/fixtures.js';
import { assignmentSnapshot, bulkAssign, type Credentials } from '../helpers/plans.js';
import { answerLines, postQuoteLines, postQuotes, seedQuotePlans, transaction } from '../helpers/quotes.js';
import { portOf } from '../helpers/raw-http.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

/** A stream of many lines takes longer than a request may by default (REQUEST_TIMEOUT_SECONDS) on a loaded machine. */
async function setup() {
  const app = await h.app({ requestTimeoutSeconds: 600 });
  return { app, ...(await seedQuotePlans(app)) };
}

/** A body of `count` lines made as the request pulls them, counting how many it pulled. */
function pulledBody(count: number, line: (i: number) => string) {
  const progress = { pulled: 0 };
  const lines = function* () {
    for (let i = 0; i < count; i++) {
      progress.pulled = i + 1;
      yield `${line(i)}\n`;
    }
  };
  return { body: Readable.from(lines(), { objectMode: false }), progress };
}

/** Starts an NDJSON request over loopback; the answer is handed over unread. */
async function streamRequest(app: FastifyInstance, credentials: Credentials, body: Readable) {
  const req = httpRequest({
    host: '127.0.0.1',
    port: portOf(app),
    method: 'POST',
    path: '/v1/fee-quotes',
    headers: { ...(credentials as Record<string, string>), 'content-type': 'application/x-ndjson' },
  });
  req.on('error', () => {});
  body.pipe(req);
  const [response] = (await once(req, 'response')) as [IncomingMessage];
  return { req, response };
}

/** Waits until `read()` gives the same value twice `quietMs` apart: the thing measured has stopped moving. */
async function settled(read: () => number, quietMs = 500): Promise<number> {
  let last = read();
  for (;;) {
    await sleep(quietMs);
    const now = read();
    if (now === last) return now;
    last = now;
  }
}

describe('POST /v1/fee-quotes with NDJSON', () => {
  it('answers one line per transaction line in order, an error object on a bad line, and goes on', async () => {
    const { app, headers, plans, m0, m1, o0 } = await setup();
    await tick();
    const before = new Date();
    await tick();
    assert.equal(
      (await bulkAssign(app, headers, { merchant_ids: [m0], payment_plan_ids: [plans.visa1.id] })).statusCode,
      201,
    );
    const snapshot = await assignmentSnapshot(h.db.current.database);
    const res = await postQuoteLines(app, headers, [
      JSON.stringify(transaction(m0, { id: 'now' })),
      '{"merchant_id": ',
      JSON.stringify(transaction(m0, { id: 'before', at: before.toISOString() })),
      '',
      JSON.stringify(transaction(m0, { id: 'zero', amount: '0' })),
      JSON.stringify(transaction(m1, { id: 'clp', amount: '1500', currency: 'CLP' })),
      JSON.stringify(transaction(o0, { id: 'foreign' })),
      `${JSON.stringify(transaction(m0, { id: 'crlf', amount: 5 }))}\r`,
      JSON.stringify({ ...transaction(m0), note: 'x'.repeat(20_000) }),
      '[1, 2]',
      JSON.stringify(transaction(m0, { id: 'bad-at', at: 'tomorrow' })),
      JSON.stringify(transaction(uuid('d'), { id: 'missing' })),
      JSON.stringify(transaction(m0, { id: 'last', installments: 3, amount: '1234.56', currency: 'ARS' })),
    ]);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/x-ndjson');
    const lines = answerLines(res.body);
    const summary = lines.map((l) =>
      l.line !== undefined
        ? [l.line, l.error.code, l.error.errors?.[0]?.field ?? null]
        : [l.id, l.error?.code ?? l.payment_plan_id],
    );
    assert.deepEqual(summary, [
      ['now', plans.visa1.id],
      [2, 'malformed_json', null],
      ['before', plans.visaHalf.id],
      [5, 'validation_failed', 'amount'],
      ['clp', plans.visa1.id],
      ['foreign', 'merchant_not_found'],
      [8, 'validation_failed', 'amount'],
      [9, 'validation_failed', null],
      [10, 'validation_failed', 'line'],
      [11, 'validation_failed', 'at'],
      ['missing', 'merchant_not_found'],
      ['last', plans.visa3.id],
    ]);
    assert.deepEqual([lines[0]!.fee, lines[2]!.fee, lines[4]!.fee, lines[11]!.fee], ['3.00', '2.51', '45', '48.02']);
    assert.equal(lines[2]!.at, before.toISOString());
    assert.match(lines[7]!.error.detail, /longer than 16384 characters/);
    assert.deepEqual(await assignmentSnapshot(h.db.current.database), snapshot);
  });

  it('answers the same quotes as the JSON request, to the byte', async () => {
    const { app, headers, m0, m1 } = await setup();
    // The stream writes its quote lines by hand: ids that need escaping, every path of the arithmetic
    // (a product past 2^53 goes through BigInt), a currency without decimals, installments, a refusal.
    const transactions = [
      transaction(m0, { id: 'quote " back \\ slash \u2028 é <b>', amount: '0.60' }),
      transaction(m1, { amount: '7.77', currency: 'BRL' }),
      transaction(m0, { id: 'big', amount: '100000000000.00' }),
      transaction(m0, { id: 'three', amount: '1234.56', currency: 'ARS', installments: 3 }),
      transaction(m1, { id: 'clp', amount: '1500', currency: 'clp' }),
      transaction(m1, { id: 'none', installments: 2 }),
    ];
    const asLines = (at?: string) =>
      postQuoteLines(
        app,
        headers,
        transactions.map((t) => JSON.stringify({ ...t, at })),
      );
    const at = new Date().toISOString();
    const asJson = (await postQuotes(app, headers, { at, transactions })).json().quotes;
    const streamed = (await asLines(at)).body;
    assert.equal(streamed, asJson.map((q: unknown) => `${JSON.stringify(q)}\n`).join(''));
    assert.equal(asJson[2].fee, '2500000000.00');
    // At the request's own instant (no `at`), kept per merchant and kind: the same but for the instant.
    const withoutAt = ({ at: _at, ...rest }: Record<string, unknown>) => rest;
    const now = answerLines((await asLines()).body);
    assert.deepEqual(now.map(withoutAt), asJson.map(withoutAt));
  });

  it('stops reading the body while the reader pauses, and answers everything in order once it reads', async () => {
    const { app, headers, m0, m1 } = await setup();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const total = 100_000;
    const { body, progress } = pulledBody(total, (i) =>
      JSON.stringify(transaction(i % 2 ? m1 : m0, { id: String(i) })),
    );
    const { response } = await streamRequest(app, headers, body);
    assert.equal(response.statusCode, 200);
    response.pause();
    // Nobody reads the answer: the service stops writing, then stops reading, then the client cannot send.
    const stalledAt = await settled(() => progress.pulled);
    assert.ok(stalledAt < total / 2, `the body was read while nobody read the answer: ${stalledAt} of ${total} lines`);
    let count = 0;
    let rest = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      for (const part of parts) {
        const quote = JSON.parse(part);
        assert.equal(quote.id, String(count), 'in order');
        assert.equal(quote.fee, count % 2 ? '3.00' : '2.51');
        count++;
      }
    });
    response.resume();
    await once(response, 'end');
    assert.equal(count, total);
  });

  it('frees the connection when the client hangs up mid-stream, and the pool stays whole', async () => {
    const { app, headers, m0 } = await setup();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { body, progress } = pulledBody(Number.MAX_SAFE_INTEGER, (i) =>
      JSON.stringify(transaction(m0, { id: String(i) })),
    );
    const { req, response } = await streamRequest(app, headers, body);
    await once(response, 'data');
    req.destroy();
    response.destroy();
    await waitFor(
      async () => (await new Promise<number>((resolve) => app.server.getConnections((_e, n) => resolve(n)))) === 0,
      'the server closes its side of the connection',
      { timeoutMs: 20_000 },
    );
    const pulled = await settled(() => progress.pulled);
    assert.ok(pulled < Number.MAX_SAFE_INTEGER);
    const stats = h.db.current.database.poolStats?.();
    if (stats)
      await waitFor(() => {
        const now = h.db.current.database.poolStats!();
        return now.idle === now.total && now.waiting === 0;
      }, 'every pooled connection is idle again');
    const after = await postQuotes(app, headers, { transactions: [transaction(m0)] });
    assert.equal(after.statusCode, 200, after.body);
  });
});
