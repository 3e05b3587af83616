/**
 * The error catalogue (src/error-catalogue.ts) is the one list of codes; the
 * other places that name codes must agree with it: docs/api.md, the OpenAPI
 * document's descriptions and the codes its operations list. (That an operation
 * answers only codes it lists is checked by the runs that call every operation,
 * fuzz.test.ts and openapi-constraints.test.ts.)
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { catalogue, errorEntry } from '../../src/error-catalogue.js';
import { ConflictError, NotFoundError, ServiceUnavailableError } from '../../src/errors.js';
import { problems } from '../../src/schemas/problems.js';
import { json, useTestApp } from '../helpers/app.js';
import { openapiDocument, operations } from '../helpers/openapi.js';

const h = useTestApp();

/** The codes a client can get over HTTP: the command line's own and the unread 499 are not in api.md. */
const ANSWERED = catalogue().filter((e) => e.scope === 'operation' || e.scope === 'any-request');
const byCode = new Map(catalogue().map((e) => [e.code as string, e]));

interface Row {
  /** The `## ` heading the table is under. */
  section: string;
  table: string[];
  cells: string[];
}

/** Every row of every table of a Markdown text, with the header of its table. */
function tableRows(markdown: string): Row[] {
  const rows: Row[] = [];
  let section = '';
  let header: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.every((c) => /^-+$/.test(c))) continue;
    if (!header) header = cells;
    else rows.push({ section, table: header, cells });
  }
  return rows;
}

const backticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

describe('the error catalogue', () => {
  it('docs/api.md lists every code a client can get, under its status, and no code of another status', async () => {
    const rows = tableRows(await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8'));
    const listed: string[] = [];
    const misplaced: string[] = [];
    for (const { section, table, cells } of rows) {
      const status = Number(cells[0]);
      if (!/^\d{3}$/.test(cells[0] ?? '')) continue;
      const codeColumn = table.findIndex((name) => name.replace(/`/g, '').toLowerCase() === 'code');
      // A table with a code column names exactly one code per row; elsewhere a status row may name codes in its text.
      const named =
        codeColumn >= 0
          ? backticked(cells[codeColumn] ?? '')
          : backticked(cells.slice(1).join(' ')).filter((t) => byCode.has(t));
      for (const code of named) {
        if (byCode.get(code)?.status !== status) misplaced.push(`${status} ${code}`);
        if (section === 'Error codes') listed.push(`${status} ${code}`);
      }
    }
    assert.deepEqual(
      misplaced,
      [],
      'codes named under a status the catalogue does not give them (or not in the catalogue)',
    );
    assert.deepEqual(
      listed.sort(),
      ANSWERED.map((e) => `${e.status} ${e.code}`).sort(),
      'the table of error codes is the catalogue',
    );
  });

  it("the document's description names every code any request may get, and every operation's code is listed by some operation", async () => {
    const app = await h.app();
    const doc = await openapiDocument(app);
    const description: string = doc.info.description;
    const unnamed = ANSWERED.filter((e) => e.scope === 'any-request' && !description.includes(`\`${e.code}\``)).map(
      (e) => e.code,
    );
    assert.deepEqual(unnamed, []);
    const listedSomewhere = new Set(operations(doc).flatMap((op) => [...op.codes.values()].flat()));
    const neverListed = ANSWERED.filter((e) => e.scope === 'operation' && !listedSomewhere.has(e.code)).map(
      (e) => e.code,
    );
    assert.deepEqual(neverListed, [], 'codes of the catalogue no operation answers');
    for (const code of listedSomewhere)
      assert.equal(byCode.get(code)?.scope, 'operation', `${code} is an operation's code`);
  });

  it("an operation's description names only codes the operation lists, each under its own status", async () => {
    const app = await h.app();
    const doc = await openapiDocument(app);
    const findings: string[] = [];
    for (const op of operations(doc)) {
      const text: string = doc.paths[op.path][op.method.toLowerCase()].description;
      const listed = new Set([...op.codes.values()].flat());
      for (const [code, entry] of byCode) {
        if (entry.scope === 'operation' && new RegExp(`\\b${code}\\b`).test(text) && !listed.has(code))
          findings.push(`${op.operationId} names ${code}, not listed`);
      }
      // "409 api_key_not_enabled", "401 `refresh_token_reused`": the status said is the code's.
      for (const [, status, code] of text.matchAll(/\b(\d{3}) `?([a-z]+(?:_[a-z]+)*)`?/g)) {
        const entry = byCode.get(code!);
        if (entry && entry.status !== Number(status))
          findings.push(`${op.operationId} says ${status} ${code}; the catalogue ${entry.status}`);
      }
    }
    assert.deepEqual(findings, []);
  });

  it('answers a code with the status, title and default detail of the catalogue', async () => {
    const app = await h.app();
    const response = await app.inject({ method: 'GET', url: '/v1/users/me' });
    const body = json(response);
    const entry = errorEntry('missing_credentials');
    assert.equal(response.statusCode, entry.status);
    assert.deepEqual(
      { status: body.status, title: body.title, detail: body.detail, code: body.code },
      { status: 401, title: 'Unauthorized', detail: entry.detail, code: 'missing_credentials' },
    );
  });

  it('error classes and problems() take only codes of the catalogue, of their status (each refusal below is a type error)', () => {
    const refused = [
      // @ts-expect-error a 404's code is no conflict
      () => new ConflictError('merchant_not_found'),
      // @ts-expect-error no such code
      () => new NotFoundError('merchant_missing'),
      // @ts-expect-error a 429's code is no 503
      () => new ServiceUnavailableError('rate_limited'),
      // @ts-expect-error an unknown path is no operation's answer: routing answers it
      () => problems('not_found'),
    ];
    // Built anyway, an error still takes its status from its code, never from its class.
    assert.equal((refused[0]!() as ConflictError).status, 404);
    assert.throws(() => refused[1]!());
  });
});
