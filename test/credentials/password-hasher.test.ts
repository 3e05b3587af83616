/**
 * The hashing threads: argon2id with OWASP's parameters (docs/design.md), off
 * the event loop, at the lowest CPU priority Linux offers (SCHED_IDLE, else
 * nice 19), and resting after each hash for their share of a core, so a login
 * storm takes only part of the CPU the rest of the service leaves.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { LOGIN_HASH_CPU_PERCENT } from '../../src/config-defaults.js';
import { ARGON2_OPTIONS, createPasswordHasher, DUMMY_HASH } from '../../src/features/credentials/password-hasher.js';
import { waitFor } from '../helpers/wait.js';

const SCHED_IDLE = 5;

/** Scheduling policy and nice value of each thread of this process (fields 41 and 19 of /proc/<tid>/stat). */
function threads(): Array<{ tid: string; policy: number; nice: number }> {
  return readdirSync('/proc/self/task').map((tid) => {
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // Fields after the command name start at field 3, so field n is fields[n - 3].
    return { tid, policy: Number(fields[41 - 3]), nice: Number(fields[19 - 3]) };
  });
}

const linux = existsSync('/proc/self/task');
const chrt = ['/usr/bin/chrt', '/bin/chrt'].some((path) => existsSync(path));

// Only the priority test runs its hasher at SCHED_IDLE: on a machine whose cores are full (CI runs
// two suites at once) an idle-priority thread may wait minutes for its first slice.
describe('password hasher: threads', () => {
  const hasher = createPasswordHasher({ concurrency: 1, queueLimit: 4, idlePriority: false });
  after(() => hasher.close());

  it('hashes argon2id with m=19456 KiB, t=2, p=1 and verifies', async () => {
    const phc = await hasher.hash('correct horse');
    assert.match(phc, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal(await hasher.verify(async () => phc, 'correct horse'), true);
    assert.equal(await hasher.verify(async () => phc, 'wrong horse'), false);
    assert.equal(await hasher.verify(async () => null, 'correct horse'), false, 'no stored hash never verifies');
  });

  it('verifies an unknown user against a dummy hash of the same parameters, which no password opens', async () => {
    const { memoryCost, timeCost, parallelism } = ARGON2_OPTIONS;
    assert.ok(DUMMY_HASH.startsWith(`$argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$`));
    assert.equal(await hasher.matches(DUMMY_HASH, 'feegate-dummy-password'), true, 'a real hash argon2 reads');
    assert.equal(await hasher.verify(async () => null, 'feegate-dummy-password'), false);
  });

  it('runs the hashing thread at SCHED_IDLE and nice 19, leaving the event loop at normal priority', {
    skip: !linux || !chrt ? 'needs Linux and chrt' : false,
  }, async () => {
    const lowered = createPasswordHasher({ concurrency: 1, queueLimit: 4 });
    try {
      await lowered.hash('wake the worker');
      const main = threads().find((t) => t.tid === String(process.pid))!;
      assert.equal(main.policy, 0, 'the event loop stays SCHED_OTHER');
      assert.equal(main.nice, 0);
      await waitFor(() => threads().some((t) => t.policy === SCHED_IDLE), 'a thread at SCHED_IDLE', {
        timeoutMs: 5000,
      });
      const idle = threads().filter((t) => t.policy === SCHED_IDLE);
      assert.equal(idle.length, 1, 'exactly one thread, the hashing worker, is lowered');
      assert.equal(idle[0]!.nice, 19);
    } finally {
      await lowered.close();
    }
  });

  it('leaves the hashing thread at normal priority with LOGIN_HASH_IDLE_PRIORITY=false', { skip: !linux }, async () => {
    assert.equal(loadConfig({}).loginHashIdlePriority, true);
    assert.equal(loadConfig({ LOGIN_HASH_IDLE_PRIORITY: 'false' }).loginHashIdlePriority, false);
    const lowered = () => threads().filter((t) => t.nice === 19).length;
    const before = { all: threads().length, lowered: lowered() };
    const normal = createPasswordHasher({ concurrency: 1, queueLimit: 4, idlePriority: false });
    try {
      // The worker lowers itself, when it does, before it takes its first job.
      await normal.hash('wake the worker');
      assert.ok(threads().length > before.all, 'a hashing thread was started');
      assert.equal(lowered(), before.lowered, 'no thread was lowered to nice 19');
    } finally {
      await normal.close();
    }
  });
});

describe('password hasher: share of a core', () => {
  it('rests after each hash for the part of its time beyond LOGIN_HASH_CPU_PERCENT, after answering', async () => {
    const rests: Array<{ busyMs: number; restedMs: number }> = [];
    const hasher = createPasswordHasher({
      concurrency: 1,
      queueLimit: 4,
      cpuPercent: 40,
      idlePriority: false,
      onRest: (busyMs, restedMs) => rests.push({ busyMs, restedMs }),
    });
    try {
      const phcs = await Promise.all([hasher.hash('one'), hasher.hash('two'), hasher.hash('three')]);
      assert.equal(phcs.length, 3);
      await waitFor(() => rests.length === 3, 'three rests', { timeoutMs: 10_000 });
      // At 40% of a core it rests 1.5 times what each hash took (the thread timed its own sleep).
      for (const { busyMs, restedMs } of rests)
        assert.ok(restedMs >= busyMs * 1.5 * 0.95, `rested ${restedMs} ms after ${busyMs} ms of hashing`);
    } finally {
      await hasher.close();
    }
  });

  it('does not rest at 100%', async () => {
    const rests: number[] = [];
    const hasher = createPasswordHasher({
      concurrency: 1,
      queueLimit: 4,
      cpuPercent: 100,
      idlePriority: false,
      onRest: (_busy, rested) => rests.push(rested),
    });
    try {
      await Promise.all([hasher.hash('one'), hasher.hash('two')]);
      assert.deepEqual(rests, []);
    } finally {
      await hasher.close();
    }
  });

  it('takes LOGIN_HASH_CPU_PERCENT from the environment, 75 by default, and refuses values outside 10..100', () => {
    assert.equal(loadConfig({}).loginHashCpuPercent, LOGIN_HASH_CPU_PERCENT);
    assert.equal(LOGIN_HASH_CPU_PERCENT, 75);
    assert.equal(loadConfig({ LOGIN_HASH_CPU_PERCENT: '100' }).loginHashCpuPercent, 100);
    assert.throws(
      () => loadConfig({ LOGIN_HASH_CPU_PERCENT: '5' }),
      /LOGIN_HASH_CPU_PERCENT must be between 10 and 100/,
    );
    assert.throws(
      () => loadConfig({ LOGIN_HASH_CPU_PERCENT: 'half' }),
      /LOGIN_HASH_CPU_PERCENT must be a whole number/,
    );
  });
});
