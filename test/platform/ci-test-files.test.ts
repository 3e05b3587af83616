/**
 * CI's two runs share the suite (scripts/ci-test-files.mjs): no test file may
 * fall between them, a file whose behaviour depends on the database must run on
 * both, and one that needs Redis in the run that has it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function filesOf(part: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['scripts/ci-test-files.mjs', part]);
  return stdout.split('\n').filter(Boolean);
}

const everyFile = readdirSync('test', { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((dir) =>
    readdirSync(`test/${dir.name}`)
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `test/${dir.name}/${name}`),
  )
  .sort();

describe("CI's two test runs", () => {
  it('take every test file between them, the database-dependent ones in both, the Redis ones with PostgreSQL', async () => {
    const embedded = await filesOf('embedded');
    const postgres = await filesOf('postgres');
    assert.deepEqual([...new Set([...embedded, ...postgres])].sort(), everyFile);
    const both = embedded.filter((file) => postgres.includes(file));
    for (const file of everyFile) {
      const text = readFileSync(file, 'utf8');
      if (/\bON_POSTGRES\b|\bTEST_DATABASE_URL\b|\buseCliDatabase\b/.test(text)) {
        assert.ok(both.includes(file), `${file} depends on the database: it runs in both`);
      } else if (/\bNEEDS_REDIS\b|\bTEST_REDIS_URL\b/.test(text)) {
        assert.deepEqual([embedded.includes(file), postgres.includes(file)], [false, true], `${file} needs Redis`);
      } else {
        assert.equal(both.includes(file), false, `${file} runs once`);
      }
    }
    // Neither run carries most of the rest: they are about even.
    assert.ok(
      Math.abs(embedded.length - postgres.length) < everyFile.length / 4,
      `${embedded.length} against ${postgres.length}`,
    );
    assert.ok(both.includes('test/operator/cli.test.ts'));
  });

  it('refuse a wrong argument with a usage line and exit 2', async () => {
    await assert.rejects(
      run(process.execPath, ['scripts/ci-test-files.mjs', 'sqlite']),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /^usage: node scripts\/ci-test-files\.mjs embedded\|postgres\n$/);
        return true;
      },
    );
  });
});
