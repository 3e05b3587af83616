/** One process at a time on an embedded data directory (docs/operations.md#embedded-or-postgresql). */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { LOCK_FILE } from '../../src/db/data-dir-lock.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { apiKeys, customers } from '../../src/db/schema.js';
import { DataDirLockedError } from '../../src/errors.js';
import { DEMO_CUSTOMERS } from '../../src/features/operator/demo-data.js';
import { runFeegate } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'feegate-lock-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the command line on an embedded directory. */
const feegate = (dataDir: string, ...args: string[]) =>
  runFeegate(args, { ...process.env, DATABASE_URL: '', FEEGATE_DATA_DIR: dataDir, PORT: '0', FEEGATE_DEMO: 'false' });

const rowsOf = async (database: Database, table: typeof customers | typeof apiKeys) =>
  (await database.db.select({ n: count() }).from(table))[0]!.n;

function assertRefused(res: { code: number; stdout: string; stderr: string }, dataDir: string) {
  assert.equal(res.code, 1, res.stdout);
  const lines = res.stderr.trim().split('\n');
  assert.equal(lines.length, 1, res.stderr);
  assert.ok(lines[0]!.includes(dataDir), res.stderr);
  assert.match(lines[0]!, /in use by process \d+/);
  assert.match(lines[0]!, /stop that process first/);
  assert.match(lines[0]!, /DATABASE_URL/);
  assert.doesNotMatch(res.stdout, /API key|imported|applied|loaded/);
}

describe('embedded data directory lock', () => {
  it('refuses a second process (command line and server) with exit 1, and it writes nothing', async () => {
    const dataDir = path.join(dir, 'held');
    const holder = await openDatabase({ dataDir });
    try {
      await holder.migrate();
      const file = path.join(dir, 'doc.json');
      await writeFile(file, JSON.stringify({ customers: [{ id: DEMO_CUSTOMERS.acme, name: 'Acme' }] }));

      assertRefused(await feegate(dataDir, 'import', file), dataDir);
      assertRefused(await feegate(dataDir, 'demo'), dataDir);
      assertRefused(
        await feegate(dataDir, 'keys', 'issue', '--user', 'a@acme.test', '--customer', DEMO_CUSTOMERS.acme),
        dataDir,
      );
      assertRefused(await feegate(dataDir, 'serve'), dataDir);

      assert.equal(await rowsOf(holder, customers), 0);
      assert.equal(await rowsOf(holder, apiKeys), 0);
      assert.ok(existsSync(path.join(dataDir, LOCK_FILE)), 'the holder keeps its lock');
    } finally {
      await holder.close();
    }
  });

  it('refuses a second open in the same process too, and frees the directory on close', async () => {
    const dataDir = path.join(dir, 'reopen');
    const first = await openDatabase({ dataDir });
    await assert.rejects(openDatabase({ dataDir }), DataDirLockedError);
    await first.close();
    assert.equal(existsSync(path.join(dataDir, LOCK_FILE)), false);
    const second = await openDatabase({ dataDir });
    await second.close();
  });

  it('takes over the lock of a holder that died, so a restart after a crash is not refused', async () => {
    const dataDir = path.join(dir, 'crashed');
    const { pid } = spawnSync(process.execPath, ['-e', '0']);
    await mkdir(dataDir);
    const stale = { pid, host: hostname(), token: 'dead', since: new Date().toISOString() };
    await writeFile(path.join(dataDir, LOCK_FILE), JSON.stringify(stale));
    const res = await feegate(dataDir, 'migrate');
    assert.equal(res.code, 0, res.stderr);
    assert.equal(existsSync(path.join(dataDir, LOCK_FILE)), false, 'released on exit');
  });

  it('takes over the lock of a holder that is a zombie (exited, not yet reaped by its parent)', async (t) => {
    const dataDir = path.join(dir, 'zombie');
    await mkdir(dataDir);
    // The shell starts a child and becomes `sleep`, which never reaps it: the child stays a zombie. The child
    // exits only once its parent is `sleep`, so the shell cannot reap it first, however loaded the machine.
    const child = 'while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done';
    const parent = spawn('sh', ['-c', `sh -c '${child}' & echo $!; exec sleep 60`], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    t.after(() => parent.kill('SIGKILL'));
    const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
    const pid = Number(line.toString().trim());
    await waitFor(
      async () => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.startsWith('Z'),
      'the child is a zombie',
    );
    const zombie = { pid, host: hostname(), token: 'zombie', since: new Date().toISOString() };
    await writeFile(path.join(dataDir, LOCK_FILE), JSON.stringify(zombie));
    const res = await feegate(dataDir, 'migrate');
    assert.equal(res.code, 0, res.stderr);
    assert.equal(existsSync(path.join(dataDir, LOCK_FILE)), false, 'released on exit');
  });

  it('takes over a lock with its own pid but not its own (a container restarted with the same pid)', async () => {
    const dataDir = path.join(dir, 'restarted');
    await mkdir(dataDir);
    await writeFile(
      path.join(dataDir, LOCK_FILE),
      JSON.stringify({ pid: process.pid, host: hostname(), token: 'previous-life', since: new Date().toISOString() }),
    );
    const database = await openDatabase({ dataDir });
    assert.equal(JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8')).pid, process.pid);
    await assert.rejects(openDatabase({ dataDir }), DataDirLockedError);
    await database.close();
  });

  it('counts a holder on another host as alive, and says which file to remove if it is gone', async () => {
    const dataDir = path.join(dir, 'shared-volume');
    await mkdir(dataDir);
    const remote = { pid: 1, host: 'elsewhere.example', token: 'remote', since: new Date().toISOString() };
    await writeFile(path.join(dataDir, LOCK_FILE), JSON.stringify(remote));
    const res = await feegate(dataDir, 'migrate');
    assertRefused(res, dataDir);
    assert.match(res.stderr, /on elsewhere\.example/);
    assert.ok(res.stderr.includes(`remove ${path.join(dataDir, LOCK_FILE)}`), res.stderr);
    assert.deepEqual(
      JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8')),
      remote,
      'a refused process leaves the lock alone',
    );
  });
});
