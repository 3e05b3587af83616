/**
 * The console build's lock (scripts/build-lock.mjs): processes that contend for it, with a dead
 * process's files left in it, hold it one at a time, and a waiter gives up naming it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { whileHoldingLock } from '../../scripts/build-lock.mjs';

const moduleUrl = new URL('../../scripts/build-lock.mjs', import.meta.url).href;

/** A process that takes the lock `rounds` times, writing `+name` on entering and `-name` on leaving. */
function contender(lockDir: string, log: string, name: string, rounds: number) {
  const script = `
    import { appendFileSync } from 'node:fs';
    const { whileHoldingLock } = await import(${JSON.stringify(moduleUrl)});
    for (let round = 0; round < ${rounds}; round++) {
      await whileHoldingLock(${JSON.stringify(lockDir)}, async () => {
        appendFileSync(${JSON.stringify(log)}, '+${name}\\n');
        await new Promise((done) => setTimeout(done, Math.random() * 15));
        appendFileSync(${JSON.stringify(log)}, '-${name}\\n');
      });
    }`;
  return spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Runs `test` with a lock directory in a temporary directory of its own, removed afterwards. */
async function inTemporaryDirectory(test: (lockDir: string) => Promise<void>) {
  const work = mkdtempSync(path.join(os.tmpdir(), 'feegate-build-lock-'));
  try {
    await test(path.join(work, 'build.lock'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Takes the lock in this process; the holder's work ends, answering 'held to the end', when `finish` is called. */
async function holdUntilFinished(lockDir: string) {
  let finish = () => {};
  let entered = () => {};
  const holding = new Promise<void>((resolve) => (entered = resolve));
  const holder = whileHoldingLock(lockDir, () => {
    entered();
    return new Promise<string>((resolve) => (finish = () => resolve('held to the end')));
  });
  await holding;
  return { finish, holder };
}

describe('console build lock', { concurrency: true }, () => {
  it('is held by one process at a time, clearing what a dead process left in it', { timeout: 60_000 }, () =>
    inTemporaryDirectory(async (lockDir) => {
      const log = path.join(path.dirname(lockDir), 'log');
      writeFileSync(log, '');
      mkdirSync(lockDir);
      // A process killed while it held the lock, and one killed while it chose its number.
      const stale = new Date(Date.now() - 120_000);
      for (const name of ['ticket.1.killed-holder', 'choosing.killed-chooser']) {
        writeFileSync(path.join(lockDir, name), '');
        utimesSync(path.join(lockDir, name), stale, stale);
      }
      const names = ['a', 'b', 'c', 'd', 'e', 'f'];
      const rounds = 3;
      const exits = await Promise.all(names.map((name) => once(contender(lockDir, log, name, rounds), 'exit')));
      assert.deepEqual(
        exits.map(([code]) => code),
        names.map(() => 0),
      );
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      assert.equal(lines.length, names.length * rounds * 2);
      for (let i = 0; i < lines.length; i += 2) {
        const [entering, leaving] = [lines[i] ?? '', lines[i + 1]];
        assert.match(entering, /^\+[a-f]$/);
        assert.equal(leaving, `-${entering.slice(1)}`, `${entering} was followed by ${leaving}: two held it`);
      }
      assert.equal(existsSync(lockDir), false, 'the last to leave removes the lock directory');
    }),
  );

  it('does not take the lock of a live holder whose file looks old (a machine woken from sleep, a clock set forward)', () =>
    inTemporaryDirectory(async (lockDir) => {
      const { finish, holder } = await holdUntilFinished(lockDir);
      const [ticket = ''] = readdirSync(lockDir);
      const old = new Date(Date.now() - 120_000);
      utimesSync(path.join(lockDir, ticket), old, old);
      // Longer than the holder takes to refresh its file (5 s) plus the time a waiter watches an old file (10 s).
      await assert.rejects(
        whileHoldingLock(lockDir, async () => assert.fail("the waiter took a live holder's lock"), {
          giveUpMs: 16_000,
        }),
        /still held/,
      );
      assert.deepEqual(readdirSync(lockDir), [ticket], "the holder's ticket is still there");
      finish();
      assert.equal(await holder, 'held to the end');
    }));

  it('makes a waiter give up after its time, naming the lock, and leaves the holder holding', () =>
    inTemporaryDirectory(async (lockDir) => {
      const { finish, holder } = await holdUntilFinished(lockDir);
      await assert.rejects(
        whileHoldingLock(lockDir, async () => assert.fail('a second process held it'), { giveUpMs: 300 }),
        (error: Error) => error.message.includes(lockDir) && error.message.includes('still held'),
      );
      assert.ok(existsSync(lockDir), 'the holder still holds it');
      finish();
      assert.equal(await holder, 'held to the end');
      assert.equal(existsSync(lockDir), false);
    }));
});
