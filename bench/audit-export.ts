/**
 * Line 10: the audit trail outside (contract section 25). 1,000,000 audit
 * records of the wide customer, written before the server starts with one
 * set-based INSERT … SELECT generate_series over 30 days, then exported in one
 * GET /v1/audit-events/export (NDJSON) read as fast as it comes: records/s, and
 * how much the service's RSS grew meanwhile (budget ≤ 50 MB), sampled every 100 ms.
 */
import { get, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { type Db, sql } from '../src/db/database.js';
import { login, sampleRssGrowth } from './load.js';
import type { PhaseContext } from './phases.js';

export const EXPORTED_RECORDS = 1_000_000;
/** The records' instants: one every 2.592 s over 30 days, from here. */
const RANGE_FROM = '2026-01-01T00:00:00.000Z';
const RANGE_TO = '2026-01-31T00:00:00.000Z';

export interface AuditExportRun {
  records: number;
  seconds: number;
  recordsPerSec: number;
  /** Highest RSS sampled during the export minus the RSS just before it. */
  rssGrowthBytes: number;
}

/** Writes the records in one statement: the shapes of a key's creation, with a request id and details. */
export async function seedAuditRecords(db: Db, customerId: string): Promise<void> {
  await db.execute(sql`
    INSERT INTO audit_events (occurred_at, request_id, actor_type, actor_id, customer_id, action, target_type, target_id, details)
    SELECT ${RANGE_FROM}::timestamptz + (g * interval '2592 milliseconds'), 'bench-' || g, 'user',
      gen_random_uuid()::text, ${customerId}::uuid, 'api_key.created', 'api_key', gen_random_uuid()::text,
      jsonb_build_object('user', 'bench-' || (g % 100) || '@bench.test', 'permissions', jsonb_build_array('fee-rules:read'))
    FROM generate_series(0, ${EXPORTED_RECORDS - 1}::int) AS g`);
}

export async function auditExport(ctx: PhaseContext, rssOf: () => number): Promise<AuditExportRun> {
  const token = await login(ctx.baseUrl, ctx.seed.wide.login);
  const url = new URL('/v1/audit-events/export', ctx.baseUrl);
  url.search = new URLSearchParams({ from: RANGE_FROM, to: RANGE_TO, format: 'ndjson' }).toString();
  const rss = sampleRssGrowth(rssOf);
  const started = performance.now();
  try {
    const req = get(url, { headers: { authorization: `Bearer ${token}` } });
    const [response] = (await once(req, 'response')) as [IncomingMessage];
    if (response.statusCode !== 200) throw new Error(`the export answered ${response.statusCode}`);
    let records = 0;
    for await (const chunk of response as AsyncIterable<Buffer>)
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) records++;
    const seconds = (performance.now() - started) / 1000;
    if (records !== EXPORTED_RECORDS) throw new Error(`the export answered ${records} records of ${EXPORTED_RECORDS}`);
    return { records, seconds, recordsPerSec: records / seconds, rssGrowthBytes: rss.growth() };
  } finally {
    rss.stop();
  }
}
