/**
 * Fee quotes (contract section 24), two lines of the bench:
 * - 9a: POST /v1/fee-quotes of one transaction under load, against the ceiling
 *   (budget ≥ 0.3×);
 * - 9b: one NDJSON request of 1,000,000 transactions over 1,000 merchants,
 *   written as fast as the service reads it and read as fast as it answers:
 *   quotes per second (budget ≥ 100,000 on PostgreSQL) and how much the
 *   service's RSS grew meanwhile (budget ≤ 50 MB), sampled every 100 ms.
 * Both on the wide customer (12,000 merchants), after an /all of the bench's plans.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { expectStatus, type LoadResult, login, request, sampleRssGrowth, warmThenRun } from './load.js';
import type { PhaseContext } from './phases.js';

export const STREAM_TRANSACTIONS = 1_000_000;
export const STREAM_MERCHANTS = 1000;
/** Lines the client writes at once: the body goes out in chunks of this many. */
const LINES_PER_CHUNK = 500;

export interface QuoteStreamRun {
  transactions: number;
  merchants: number;
  seconds: number;
  quotesPerSec: number;
  /** Highest RSS sampled during the stream minus the RSS just before it. */
  rssGrowthBytes: number;
  /** Lines answered that were not quotes (refusals, errors): 0 when all went well. */
  notQuoted: number;
}

async function prepare(ctx: PhaseContext) {
  const token = await login(ctx.baseUrl, ctx.seed.wide.login);
  const headers = { authorization: `Bearer ${token}` };
  const assigned = await request(ctx.baseUrl, 'POST', '/v1/fee-rules/bulk-assign/all', {
    headers,
    body: { payment_plan_ids: ctx.seed.main.planIds },
  });
  expectStatus(assigned, 201, 'POST /v1/fee-rules/bulk-assign/all');
  const page = await request(ctx.baseUrl, 'GET', `/v1/merchants?size=${STREAM_MERCHANTS}`, { headers });
  expectStatus(page, 200, `GET /v1/merchants?size=${STREAM_MERCHANTS}`);
  const merchants = (page.body as { _embedded: { merchants: Array<{ id: string }> } })._embedded.merchants.map(
    (m) => m.id,
  );
  return { headers, merchants };
}

/** The bench's plans are VISA credit with terms 1..12: installments cycle through them. */
const transaction = (merchantId: string, n: number) => ({
  merchant_id: merchantId,
  amount: `${1 + (n % 9973)}.${String(n % 100).padStart(2, '0')}`,
  currency: 'ARS',
  card_brand: 'VISA',
  payment_method: 'CREDIT',
  installments: 1 + (n % 12),
  is_international: false,
});

export async function oneQuote(ctx: PhaseContext): Promise<LoadResult> {
  const { headers, merchants } = await prepare(ctx);
  const body = { transactions: [transaction(merchants[0]!, 1)] };
  const probe = await request(ctx.baseUrl, 'POST', '/v1/fee-quotes', { headers, body });
  expectStatus(probe, 200, 'POST /v1/fee-quotes');
  const [quote] = (probe.body as { quotes: Array<{ fee?: string }> }).quotes;
  if (quote?.fee === undefined) throw new Error(`POST /v1/fee-quotes did not quote: ${JSON.stringify(probe.body)}`);
  return warmThenRun(ctx.baseUrl, {
    path: '/v1/fee-quotes',
    method: 'POST',
    headers,
    body,
    connections: ctx.connections,
    durationSeconds: ctx.durationSeconds,
  });
}

/** The body: `total` lines over the merchants in turn, made as the socket takes them. */
function body(merchants: string[], total: number): Readable {
  const lines = merchants.map((m, i) => `${JSON.stringify(transaction(m, i))}\n`);
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < total; sent += LINES_PER_CHUNK) {
        let chunk = '';
        for (let n = sent; n < Math.min(total, sent + LINES_PER_CHUNK); n++) chunk += lines[n % lines.length];
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
}

export async function quoteStream(ctx: PhaseContext, rssOf: () => number): Promise<QuoteStreamRun> {
  const { headers, merchants } = await prepare(ctx);
  if (merchants.length !== STREAM_MERCHANTS) throw new Error(`found ${merchants.length} merchants`);
  const url = new URL('/v1/fee-quotes', ctx.baseUrl);
  const rss = sampleRssGrowth(rssOf);
  const started = performance.now();
  try {
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/x-ndjson' } });
    body(merchants, STREAM_TRANSACTIONS).pipe(req);
    const [response] = (await once(req, 'response')) as [IncomingMessage];
    if (response.statusCode !== 200) throw new Error(`the NDJSON request answered ${response.statusCode}`);
    let lines = 0;
    let notQuoted = 0;
    let rest = '';
    response.setEncoding('utf8');
    for await (const chunk of response as AsyncIterable<string>) {
      const text = rest + chunk;
      const last = text.lastIndexOf('\n');
      rest = text.slice(last + 1);
      for (let at = text.indexOf('\n'); at !== -1 && at <= last; at = text.indexOf('\n', at + 1)) lines++;
      // Refusals and line errors name `error`; a quote never does.
      notQuoted += text.slice(0, last + 1).split('"error"').length - 1;
    }
    const seconds = (performance.now() - started) / 1000;
    if (lines !== STREAM_TRANSACTIONS) throw new Error(`the stream answered ${lines} lines of ${STREAM_TRANSACTIONS}`);
    return {
      transactions: lines,
      merchants: merchants.length,
      seconds,
      quotesPerSec: lines / seconds,
      rssGrowthBytes: rss.growth(),
      notQuoted,
    };
  } finally {
    rss.stop();
  }
}
