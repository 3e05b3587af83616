/** GET /v1/audit-events/export: the customer's trail for a range, oldest first, as NDJSON or CSV (contract section 25). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { auditEvents } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { issueKey, loginAs, seedWorld } from '../helpers/fixtures.js';
import { apiKey, type Credentials } from '../helpers/plans.js';

const h = useTestApp();

const FROM = '2026-03-01T00:00:00.000Z';
const TO = '2026-03-02T00:00:00.000Z';
/** More than one batch of the export (1,000 rows), many sharing an instant, so batches meet inside a tie. */
const RECORDS = 2300;
const AWKWARD = { note: 'a "quoted", comma\nand a line break\r\n', plain: 'x' };

function exportAudit(app: FastifyInstance, credentials: Credentials, query: string) {
  return app.inject({ method: 'GET', url: `/v1/audit-events/export${query}`, headers: credentials });
}

/** An RFC 4180 reader, written apart from the writer so that the test can catch it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(field, '', 'the text ends with a line end');
  return rows;
}

/** Alpha with RECORDS records in [FROM, TO) (written as the unit of work writes them, at chosen instants), one before, one at TO, and Beta's. */
async function setup() {
  const app = await h.app();
  const world = await seedWorld(app);
  const token = bearer((await loginAs(app, world.login)).access_token);
  const { db } = h.db.current.database;
  await db.execute(sql`
    INSERT INTO audit_events (occurred_at, request_id, actor_type, actor_id, customer_id, action, target_type, target_id, details)
    SELECT ${FROM}::timestamptz + (n / 7) * interval '1 second', 'req-' || n, 'operator', NULL, ${world.customerId}::uuid,
           'test.record', 'merchants', 'm,' || n, CASE WHEN n % 500 = 0 THEN ${JSON.stringify(AWKWARD)}::jsonb ELSE jsonb_build_object('n', n) END
    FROM generate_series(1, ${RECORDS}) AS n`);
  await db.execute(sql`
    INSERT INTO audit_events (occurred_at, actor_type, customer_id, action, target_type, details)
    VALUES ('2026-02-28T23:59:59.999Z', 'operator', ${world.customerId}::uuid, 'test.before', 'x', '{}'),
           (${TO}::timestamptz, 'operator', ${world.customerId}::uuid, 'test.at_end', 'x', '{}'),
           ('2026-03-01T12:00:00Z', 'operator', ${world.otherCustomerId}::uuid, 'test.beta', 'x', '{}')`);
  return { app, world, token };
}

/** The same range read through GET /v1/audit-events, page by page, turned oldest first. */
async function listed(app: FastifyInstance, credentials: Credentials) {
  const records: Array<Record<string, any>> = [];
  for (let page = 0; ; page++) {
    const res = await app.inject({
      method: 'GET',
      url: `/v1/audit-events?from=${FROM}&to=${TO}&size=1000&page=${page}`,
      headers: credentials,
    });
    assert.equal(res.statusCode, 200, res.body);
    records.push(...json(res).data);
    if (page + 1 >= json(res).page.total_pages) return records.reverse();
  }
}

describe('GET /v1/audit-events/export: happy', () => {
  it('writes NDJSON: every record of [from, to), oldest first, each as GET /v1/audit-events writes it', async () => {
    const { app, token } = await setup();
    const res = await exportAudit(app, token, `?from=${FROM}&to=${TO}&format=ndjson`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    assert.ok(res.body.endsWith('\n'));
    const lines = res.body.slice(0, -1).split('\n');
    assert.equal(lines.length, RECORDS);
    const exported = lines.map((line) => JSON.parse(line));
    assert.deepEqual(exported, await listed(app, token));
    assert.deepEqual(exported[499]!.details, AWKWARD);
    // The default format is NDJSON.
    assert.equal((await exportAudit(app, token, `?from=${FROM}&to=${TO}`)).body, res.body);
  });

  it('writes CSV per RFC 4180: a header, CRLF, quoted fields with commas, quotes and line breaks', async () => {
    const { app, token } = await setup();
    const res = await exportAudit(app, token, `?from=${FROM}&to=${TO}&format=csv`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8; header=present');
    const [header, ...rows] = parseCsv(res.body);
    assert.deepEqual(header, [
      'id',
      'create_date',
      'action',
      'actor_type',
      'actor_id',
      'actor_user',
      'request_id',
      'target_type',
      'target_id',
      'details',
    ]);
    const expected = (await listed(app, token)).map((e) => [
      e.id,
      e.create_date,
      e.action,
      e.actor.type,
      e.actor.id ?? '',
      e.actor.user ?? '',
      e.request_id ?? '',
      e.target.type,
      e.target.id ?? '',
      JSON.stringify(e.details),
    ]);
    assert.equal(rows.length, RECORDS);
    assert.deepEqual(rows, expected);
    assert.deepEqual(JSON.parse(rows[499]![9]!), AWKWARD);
    assert.ok(res.body.includes('"m,500"'), 'a field with a comma is quoted');
  });

  it('exports an empty range as nothing (NDJSON) or the header alone (CSV), and answers a customer API key', async () => {
    const { app, world } = await setup();
    const key = await issueKey(app, { user: 'siem@alpha.test', customerId: world.customerId });
    const empty = '?from=2025-01-01T00:00:00Z&to=2025-01-02T00:00:00Z';
    const ndjson = await exportAudit(app, apiKey(key.api_key), empty);
    assert.equal(ndjson.statusCode, 200, ndjson.body);
    assert.equal(ndjson.body, '');
    const csv = await exportAudit(app, apiKey(key.api_key), `${empty}&format=csv`);
    assert.equal(csv.body.split('\r\n').length, 2);
  });
});

describe('GET /v1/audit-events/export: errors', () => {
  for (const [name, query, code, field] of [
    ['from after to', `?from=${TO}&to=${FROM}`, 'invalid_time_range', 'from'],
    ['a range over 366 days', '?from=2025-01-01T00:00:00Z&to=2026-01-02T00:00:00.001Z', 'invalid_time_range', 'to'],
    ['an unknown format', `?from=${FROM}&to=${TO}&format=xml`, 'validation_failed', 'format'],
    ['no from', `?to=${TO}`, 'validation_failed', 'from'],
    ['no to', `?from=${FROM}`, 'validation_failed', 'to'],
    ['a from that is not an instant', `?from=yesterday&to=${TO}`, 'validation_failed', 'from'],
    ['an unknown parameter', `?from=${FROM}&to=${TO}&action=x`, 'validation_failed', 'action'],
  ]) {
    it(`answers 400 ${code} naming ${field} for ${name}, and writes nothing`, async () => {
      const { app, token } = await setup();
      const { db } = h.db.current.database;
      const [before] = await db.select({ n: count() }).from(auditEvents);
      const res = await exportAudit(app, token, query!);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).code, code);
      assert.equal(json(res).errors[0].field, field);
      const [after] = await db.select({ n: count() }).from(auditEvents);
      assert.equal(after!.n, before!.n);
    });
  }

  it('takes a range of exactly 366 days', async () => {
    const { app, token } = await setup();
    const res = await exportAudit(app, token, '?from=2025-03-01T00:00:00Z&to=2026-03-02T00:00:00Z');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body.split('\n').length - 1, RECORDS + 1, 'test.before is in this range too');
  });
});

describe('GET /v1/audit-events/export: security', () => {
  it("exports only the caller customer's records", async () => {
    const { app, world } = await setup();
    const beta = bearer((await loginAs(app, world.otherLogin)).access_token);
    const res = await exportAudit(app, beta, `?from=${FROM}&to=${TO}`);
    assert.deepEqual(
      res.body
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).action),
      ['test.beta'],
    );
  });

  it('answers 403 to a merchant key whatever the query, and 401 without credentials', async () => {
    const { app, world } = await setup();
    const merchantKey = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    for (const query of [`?from=${FROM}&to=${TO}`, '?format=xml']) {
      const res = await exportAudit(app, apiKey(merchantKey.api_key), query);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json(res).code, 'forbidden');
    }
    assert.equal((await exportAudit(app, {}, `?from=${FROM}&to=${TO}`)).statusCode, 401);
  });
});
