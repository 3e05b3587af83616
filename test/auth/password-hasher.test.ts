/**
 * The hashing threads: argon2id with the contract's parameters, off the event
 * loop, at the lowest CPU priority Linux offers (SCHED_IDLE, else nice 19), so a
 * login storm takes only the CPU the rest of the service leaves.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { createPasswordHasher } from '../../src/features/auth/password-hasher.js';
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

describe('password hasher: threads', () => {
  const hasher = createPasswordHasher({ concurrency: 1, queueLimit: 4 });
  after(() => hasher.close());

  it('hashes argon2id with m=19456 KiB, t=2, p=1 and verifies', async () => {
    const phc = await hasher.hash('correct horse');
    assert.match(phc, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal(await hasher.verify(async () => phc, 'correct horse'), true);
    assert.equal(await hasher.verify(async () => phc, 'wrong horse'), false);
    assert.equal(await hasher.verify(async () => null, 'correct horse'), false, 'no stored hash never verifies');
  });

  it('runs the hashing thread at SCHED_IDLE and nice 19, leaving the event loop at normal priority', { skip: !linux || !chrt ? 'needs Linux and chrt' : false }, async () => {
    await hasher.hash('wake the worker');
    const main = threads().find((t) => t.tid === String(process.pid))!;
    assert.equal(main.policy, 0, 'the event loop stays SCHED_OTHER');
    assert.equal(main.nice, 0);
    await waitFor(() => threads().some((t) => t.policy === SCHED_IDLE), 'a thread at SCHED_IDLE', { timeoutMs: 5000 });
    const idle = threads().filter((t) => t.policy === SCHED_IDLE);
    assert.equal(idle.length, 1, 'exactly one thread, the hashing worker, is lowered');
    assert.equal(idle[0]!.nice, 19);
  });
});
