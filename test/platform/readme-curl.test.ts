/**
 * The README's curl walkthrough and its "Moving from the platform" commands
 * work as printed (issue 39): both sh blocks, taken from the README verbatim,
 * run in one bash against a server started as `feegate serve` is, with the
 * demo data the README's ids and passwords come from.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FEEGATE_BIN, runFeegate, useCliDatabase } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);

function hasCurl(): boolean {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The first ```sh block after `marker` in the README; fails when the marker or the block is gone. */
function shBlockAfter(readme: string, marker: string): string {
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `README.md has no "${marker}"`);
  const block = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(at))?.[1];
  assert.ok(block, `README.md has no sh block after "${marker}"`);
  return block;
}

/**
 * The script with a marker line echoed before each walkthrough step (`# N. …`)
 * and before each command of the moving block, so that each output is read on
 * its own; the README's lines themselves are left as they are.
 */
function marked(walkthrough: string, moving: string): string {
  const steps = walkthrough.split('\n').flatMap((line) => {
    const step = /^# (\d+)\./.exec(line);
    return step ? [`echo '@@ step ${step[1]}'`, line] : [line];
  });
  let command = 0;
  const commands = moving.split('\n').flatMap((line) => {
    const starts = line !== '' && !/^\s/.test(line) && !line.startsWith('#');
    return starts ? [`echo '@@ moving ${++command}'`, line] : [line];
  });
  return [...steps, ...commands].join('\n');
}

/** The output printed after each marker, by marker name. */
function sections(stdout: string): Map<string, string[]> {
  const parts = new Map<string, string[]>();
  let lines: string[] = [];
  for (const line of stdout.split('\n')) {
    const marker = /^@@ (.+)$/.exec(line)?.[1];
    if (marker) {
      lines = [];
      parts.set(marker, lines);
    } else if (line !== '') lines.push(line);
  }
  return parts;
}

const cli = useCliDatabase('feegate-readme-curl-');

describe('README curl commands', { skip: hasCurl() ? false : 'curl is not installed' }, () => {
  // In the suite, so that they run after useCliDatabase has made the file's database.
  let server: ChildProcess | undefined;
  let base = '';

  before(async () => {
    const port = await freePort();
    const env = { ...cli.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' };
    // The embedded database gets the demo data at its first start, as `npm start` does; PostgreSQL through `feegate demo`.
    if (cli.pg) {
      const demo = await runFeegate(['demo'], env, FEEGATE_BIN);
      assert.equal(demo.code, 0, demo.stderr);
    }
    server = spawn(process.execPath, [FEEGATE_BIN, 'serve'], { env, stdio: 'ignore' });
    base = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => (await fetch(`${base}/ready`).catch(() => undefined))?.ok === true,
      `feegate serve did not become ready on ${port}`,
      { timeoutMs: 90_000, intervalMs: 250 },
    );
  });
  after(async () => {
    if (server && server.exitCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      await exited;
    }
  });

  it('the walkthrough and the moving-from-the-platform commands work as printed', async () => {
    const readme = readFileSync('README.md', 'utf8');
    const walkthrough = shBlockAfter(readme, '## Walkthrough with curl');
    const moving = shBlockAfter(readme, '**Moving from the platform.**');
    const script = marked(walkthrough, moving).replace(/^BASE=.*$/m, `BASE=${base}`);
    assert.notEqual(script, marked(walkthrough, moving), 'the walkthrough sets BASE');
    const { stdout, stderr } = await run('bash', ['-c', script], { timeout: 120_000 });
    assert.equal(stderr, '', 'no command failed');
    const out = sections(stdout);
    const json = (name: string, line: number) => JSON.parse(out.get(name)?.[line] ?? 'null');
    const STORE = 'd0000000-0000-4000-8000-000000000001';

    assert.equal(json('step 1', 0).user, 'ops@acme.test');
    assert.ok(Array.isArray(json('step 2', 0)._embedded.merchants), 'the platform listing');
    assert.equal(json('step 2', 0).page.number, 0);
    assert.deepEqual(json('step 2', 1).tax_identification, { type: 'CUIT', number: '30712345671' }, 'merchant created');
    assert.equal(json('step 3', 0).data.length, 3);
    assert.equal(out.get('step 4')?.[0], '201');
    const held = json('step 5', 0).data.map((plan: { id: string }) => plan.id);
    for (const id of ['e0000000-0000-4000-8000-000000000058', 'e0000000-0000-4000-8000-000000000003']) {
      assert.ok(held.includes(id), `Downtown holds ${id}`);
    }
    assert.match(out.get('step 6')?.[0] ?? '', /^fgk_\w+$/, 'the full key');
    const merchantKey = json('step 7', 0);
    assert.equal(merchantKey.user_type, 'MERCHANT');
    assert.match(merchantKey.api_key, /^fgk_\w+$/);
    assert.match(json('step 7', 1).data[0].api_key, /^fgk_\*{4}/, 'listed masked');
    assert.deepEqual(json('step 7', 2).data[0].merchant_id, [STORE]);
    assert.equal(out.get('step 8')?.[0], '204');
    assert.equal(json('step 8', 1).data[0].id, merchantKey.id);
    assert.equal(json('step 8', 1).data[0].status, 'DELETED');
    assert.equal(out.get('step 9')?.[0], '204');
    assert.equal(json('step 9', 1).code, 'invalid_token', 'the logged-out token is refused');

    assert.deepEqual(out.get('moving 1'), [], 'the new login prints nothing');
    const page = json('moving 2', 0);
    assert.equal(page.size, 10_000);
    assert.equal(typeof page.total_elements, 'number');
    assert.equal(typeof page.total_pages, 'number');
    assert.equal(page.number, 0);
    assert.deepEqual(json('moving 3', 0), { type: 'CUIT', number: '20267565393' }, "v1's tax as tax_identification");
    const sdkKey = json('moving 4', 0);
    assert.match(sdkKey.api_key, /^fgk_\w+$/, 'POST /api/auth/users answers a key');
    assert.equal(sdkKey.merchant_id, STORE);
  });
});
