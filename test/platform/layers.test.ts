/**
 * The house's boundaries, checked on every import (docs/layout.md): a service
 * holds rules and never the database, drizzle, a driver, Fastify or a plugin,
 * and writes through its unit of work rather than recording audits itself; a
 * route translates HTTP and never reaches a DAL or the database.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const FEATURES = path.resolve(import.meta.dirname, '../../src/features');

function files(suffix: string): string[] {
  return readdirSync(FEATURES, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(suffix))
    .map((f) => path.join(FEATURES, f));
}

/** Every module an import or export statement names, with what it imports. */
function imports(file: string): Array<{ from: string; names: string }> {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^(?:import|export)\s+(?:type\s+)?([^;]*?)\s+from\s+'([^']+)'/gms)].map((m) => ({
    from: m[2]!,
    names: m[1]!,
  }));
}

function violations(
  suffix: string,
  forbidden: Array<{ test: (i: { from: string; names: string }) => boolean; why: string }>,
): string[] {
  return files(suffix).flatMap((file) =>
    imports(file).flatMap((i) =>
      forbidden.filter((f) => f.test(i)).map((f) => `${path.relative(FEATURES, file)} imports ${i.from}: ${f.why}`),
    ),
  );
}

describe('layers', () => {
  it('services import no database, driver, drizzle, Fastify or plugin, and never record audits themselves', () => {
    const found = violations('-service.ts', [
      {
        test: (i) => /^(drizzle-orm|pg|@electric-sql\/pglite|fastify)(\/|$)/.test(i.from),
        why: 'a service knows no database or HTTP',
      },
      {
        test: (i) => /\/db\/(database|driver|postgres|pglite|schema|data-layer)\.js$/.test(i.from),
        why: 'a service gets DALs and a unit of work, never the database',
      },
      { test: (i) => /\/plugins\//.test(i.from), why: 'a service knows no Fastify plugin' },
      {
        test: (i) => /audit-dal\.js$/.test(i.from) && /\brecordAudit\b/.test(i.names),
        why: 'audit records are written by the unit of work',
      },
    ]);
    assert.deepEqual(found, []);
  });

  it('routes reach services only: no DAL, no database', () => {
    const found = violations('-routes.ts', [
      { test: (i) => /-dal\.js$/.test(i.from), why: 'a route calls services, not DALs' },
      {
        test: (i) => /\/db\//.test(i.from) || /^(drizzle-orm|pg)(\/|$)/.test(i.from),
        why: 'a route never touches the database',
      },
    ]);
    assert.deepEqual(found, []);
  });

  it('finds what it looks for', () => {
    // The check itself: a file importing the database is caught (guards against a regex that matches nothing).
    assert.deepEqual(
      imports(path.join(FEATURES, 'api-keys/api-keys-dal.ts')).some((i) => /\/db\/database\.js$/.test(i.from)),
      true,
    );
  });
});
