/**
 * The house's boundaries (docs/layout.md) are Biome rules (biome.json,
 * `noRestrictedImports`), run by `npm run lint` in CI: a service holds rules and
 * never the database, drizzle, a driver, Fastify or a plugin, and writes through
 * its unit of work rather than recording audits itself; a route translates HTTP
 * and never reaches a DAL or the database. Here: the tree keeps them, and the
 * rules catch each breach in probe files linted with the repository's own
 * configuration. Features lean on each other one way only: no two feature
 * folders import each other, directly or around a cycle, and the arrows that
 * remain are the ones docs/layout.md lists. db/ and lib/ import no feature at all.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { type Arrows, arrowLines, cycles, featureArrows, featureImportsUnder } from '../helpers/feature-arrows.js';
import { read } from '../helpers/repository-text.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIOME = path.join(ROOT, 'node_modules/.bin/biome');

function lint(cwd: string, target: string): { code: number | null; out: string } {
  const run = spawnSync(BIOME, ['lint', '--max-diagnostics=100', target], { cwd, encoding: 'utf8' });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

/** A folder with the repository's Biome configuration (without git) and the given files. */
function probeTree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'feegate-layers-'));
  const config = JSON.parse(readFileSync(path.join(ROOT, 'biome.json'), 'utf8'));
  config.$schema = undefined;
  config.vcs = { enabled: false };
  writeFileSync(path.join(dir, 'biome.json'), JSON.stringify(config));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  probes.push(dir);
  return dir;
}
const probes: string[] = [];
after(() => {
  for (const dir of probes) rmSync(dir, { recursive: true, force: true });
});

const SERVICE_BREACHES: Record<string, string> = {
  'drizzle-orm': "import { sql } from 'drizzle-orm';",
  'drizzle-orm/pg-core': "import { pgTable } from 'drizzle-orm/pg-core';",
  pg: "import pg from 'pg';",
  fastify: "import type { FastifyInstance } from 'fastify';",
  'the database': "import { openDatabase } from '../../db/database.js';",
  'the schema': "import { users } from '../../db/schema.js';",
  'the data layer': "import { createDataLayer } from '../../data-layer.js';",
  'a plugin': "import { metricsPlugin } from '../../plugins/metrics.js';",
  recordAudit: "import { recordAudit } from '../audit/audit-dal.js';",
};
const ROUTE_BREACHES: Record<string, string> = {
  'a DAL': "import { createMerchantsDal } from './probe-dal.js';",
  'the database': "import { openDatabase } from '../../db/database.js';",
  'the unit of work': "import { createUnitOfWork } from '../../db/unit-of-work.js';",
  'the data layer': "import { createDataLayer } from '../../data-layer.js';",
  'drizzle-orm': "import { sql } from 'drizzle-orm';",
};

describe('layers', () => {
  it('the source tree keeps them', () => {
    const { code, out } = lint(ROOT, 'src/features');
    assert.equal(code, 0, out);
  });

  for (const [what, line] of Object.entries(SERVICE_BREACHES)) {
    it(`a service importing ${what} is refused`, () => {
      const dir = probeTree({ 'src/features/probe/probe-service.ts': `${line}\nexport const probe = 1;\n` });
      const { code, out } = lint(dir, 'src');
      assert.equal(code, 1, out);
      assert.match(out, /noRestrictedImports/);
    });
  }

  for (const [what, line] of Object.entries(ROUTE_BREACHES)) {
    it(`a route importing ${what} is refused`, () => {
      const dir = probeTree({ 'src/features/probe/probe-routes.ts': `${line}\nexport const probe = 1;\n` });
      const { code, out } = lint(dir, 'src');
      assert.equal(code, 1, out);
      assert.match(out, /noRestrictedImports/);
    });
  }

  it('what a service and a route may import passes', () => {
    const dir = probeTree({
      'src/features/probe/probe-service.ts':
        "import type { UnitOfWork } from '../../db/unit-of-work.js';\nimport type { AuditEvent } from '../audit/audit-dal.js';\nexport type Probe = [UnitOfWork<unknown>, AuditEvent];\n",
      'src/features/probe/probe-routes.ts':
        "import type { FastifyInstance } from 'fastify';\nimport type { Services } from '../../services.js';\nexport type Probe = [FastifyInstance, Services];\n",
    });
    const { code, out } = lint(dir, 'src');
    assert.equal(code, 0, out);
  });
});

describe('db/ and lib/', () => {
  for (const dir of ['src/db', 'src/lib']) {
    it(`${dir}/ imports no feature`, () => {
      assert.deepEqual(featureImportsUnder(dir), []);
    });
  }

  it('an import of a feature from db/ or lib/, of any kind, is found', () => {
    const dir = probeTree({
      'src/db/probe.ts':
        "import type { AuditEvent } from '../features/audit/audit-dal.js';\nexport type P = AuditEvent;\n",
      'src/lib/probe.ts':
        "export { insertEvents } from '../features/events/events-dal.js';\nexport const p = () => import('../features/x/y.js');\nimport '../features/z/side.js';\n",
      'src/lib/fine.ts': "import { ROOT } from '../db/x.js';\nexport const r = ROOT;\n",
    });
    assert.deepEqual(featureImportsUnder('src/db', dir), ['src/db/probe.ts -> ../features/audit/audit-dal.js']);
    assert.deepEqual(featureImportsUnder('src/lib', dir), [
      'src/lib/probe.ts -> ../features/events/events-dal.js',
      'src/lib/probe.ts -> ../features/x/y.js',
      'src/lib/probe.ts -> ../features/z/side.js',
    ]);
  });
});

/** The `a -> b, c` lines of the fenced block under "## Features that use each other" in docs/layout.md. */
function documentedArrows(): string[] {
  const section = read('docs/layout.md').split('## Features that use each other')[1] ?? '';
  const block = section.split('```')[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes(' -> '))
    .sort();
}

describe('features', () => {
  const arrows = featureArrows();

  it('no two features import each other, directly or around a cycle', () => {
    assert.deepEqual(cycles(arrows), []);
  });

  it('docs/layout.md lists the arrows that remain', () => {
    const actual = arrowLines(arrows);
    assert.deepEqual(documentedArrows(), actual, `the block should read:\n${actual.join('\n')}`);
  });

  it('a pair importing each other, or a longer cycle, is found', () => {
    const graph = (edges: Record<string, string[]>): Arrows =>
      new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));
    assert.deepEqual(cycles(graph({ auth: ['users'], users: ['auth'], mail: [] })), [['auth', 'users']]);
    assert.deepEqual(cycles(graph({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] })), [['a', 'b', 'c']]);
    assert.deepEqual(cycles(graph({ users: ['auth', 'credentials'], auth: ['credentials'], credentials: [] })), []);
  });
});
