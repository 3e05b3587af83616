/**
 * `npm start` hands signals to the service
 * (docs/operations.md#starting-and-stopping): a supervisor signals the npm
 * process, and the service must stop gracefully with no process of the group
 * left behind.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { LOCK_FILE } from '../../src/db/data-dir-lock.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'feegate-signals-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Pids in a process group (pgrep exits 1 when there are none). */
function groupMembers(pgid: number): number[] {
  try {
    return execFileSync('pgrep', ['-g', String(pgid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    return [];
  }
}

async function isServing(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health`)).ok;
  } catch {
    return false;
  }
}

/** `npm start` in its own process group (as under a supervisor), on a free port and a fresh data directory. */
async function npmStart(name: string): Promise<{ npm: ChildProcess; port: number; output: () => string }> {
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: '',
    FEEGATE_DATA_DIR: path.join(dir, name),
    PORT: String(port),
    FEEGATE_DEMO: 'false',
    LOG_LEVEL: 'info',
  };
  const npm = spawn('npm', ['start'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  npm.stdout!.on('data', (d) => (output += d));
  npm.stderr!.on('data', (d) => (output += d));
  await waitFor(() => isServing(port), `npm start did not serve on ${port}`, { timeoutMs: 90_000, intervalMs: 250 });
  return { npm, port, output: () => output };
}

describe('npm start and signals', () => {
  // A supervisor signals the npm process; Ctrl-C in a terminal signals the whole
  // group, so node gets SIGINT twice (from the terminal, and forwarded by npm).
  for (const [signal, target] of [
    ['SIGTERM', 'npm'],
    ['SIGINT', 'npm'],
    ['SIGINT', 'group'],
  ] as const) {
    it(`${signal} to the ${target === 'npm' ? 'npm process' : 'whole process group (Ctrl-C)'} stops the service gracefully and leaves no process behind`, async () => {
      const { npm, port, output } = await npmStart(`${signal}-${target}`);
      const pgid = npm.pid!;
      try {
        const members = groupMembers(pgid);
        assert.ok(members.length >= 2, `npm and node run: ${members.join(' ')}`);
        const exited = once(npm, 'exit');
        if (target === 'npm') npm.kill(signal);
        else process.kill(-pgid, signal);
        await exited;
        await waitFor(() => groupMembers(pgid).length === 0, `processes left behind: ${groupMembers(pgid).join(' ')}`, {
          timeoutMs: 15_000,
          intervalMs: 100,
        });
        assert.equal(await isServing(port), false);
        assert.match(output(), new RegExp(`"signal":"${signal}","msg":"shutting down: finishing requests in flight"`));
        assert.match(output(), /"msg":"closed"/, 'the graceful close ran to its end');
        assert.doesNotMatch(output(), /second signal/);
      } finally {
        // Only a group still there: once it is gone its id may be another process's group (ids are recycled).
        if (groupMembers(pgid).length > 0) {
          try {
            process.kill(-pgid, 'SIGKILL');
          } catch {
            // gone meanwhile
          }
        }
      }
    });
  }

  for (const [name, fault] of [
    ['an uncaught exception', "setTimeout(() => { throw new Error('boom'); }, 100);"],
    ['an unhandled rejection', "setTimeout(() => { Promise.reject(new Error('boom')); }, 100);"],
  ] as const) {
    it(`${name} is logged, closes the service gracefully and exits 1`, async () => {
      const dataDir = path.join(dir, name.replaceAll(' ', '-'));
      const script = `const { serve } = await import(${JSON.stringify(path.resolve('src/server.ts'))});
        const { loadConfig } = await import(${JSON.stringify(path.resolve('src/config.ts'))});
        await serve(loadConfig());
        ${fault}`;
      const env = {
        ...process.env,
        DATABASE_URL: '',
        FEEGATE_DATA_DIR: dataDir,
        PORT: '0',
        FEEGATE_DEMO: 'false',
        LOG_LEVEL: 'info',
      };
      const res = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { env, timeout: 60_000 },
      ).then(
        () => ({ code: 0, stdout: '' }),
        (err: { code: number; stdout: string }) => err,
      );
      assert.equal(res.code, 1);
      assert.match(res.stdout, /"level":60,.*"message":"boom".*"msg":"uncaught error: shutting down"/);
      assert.match(res.stdout, /Server listening/);
      assert.equal(existsSync(path.join(dataDir, LOCK_FILE)), false, 'the embedded directory is free again');
    });
  }
});
