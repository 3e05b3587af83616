/**
 * A lock between processes sharing a directory, for the console build
 * (scripts/console-build.mjs, docs/console.md). Who holds it is decided by Lamport's bakery over
 * files in the directory: each process writes `choosing.<id>` while it picks a
 * number one above every ticket it sees, then `ticket.<n>.<id>`, and holds the
 * lock once no other process is choosing and no other ticket comes before its
 * own. A process keeps the times of its files fresh; a file whose time stays
 * 30 s behind was left by a process that died (a killed build) and is deleted
 * by whoever finds it.
 *
 * Written here rather than with proper-lockfile: its takeover of a stale lock
 * (stat, rmdir, mkdir) lets a waiter remove the lock another waiter has just
 * taken, and both hold it (moxystudio/node-proper-lockfile#121, open; the fork
 * named there puts a taken lock back with a rename, which can still drop a third
 * process's). Here every file has one owner and a name used once, so deleting a
 * dead process's files can never remove a live one's.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const REFRESH_MS = 5_000;
const STALE_MS = 30_000;
const CONFIRM_MS = 2 * REFRESH_MS;
const POLL_MS = 100;

/** `choosing.<id>` or `ticket.<n>.<id>`; anything else in the directory is ignored. */
function parseEntry(name) {
  const parts = name.split('.');
  if (parts[0] === 'choosing' && parts.length === 2) return { name, id: parts[1], choosing: true };
  if (parts[0] === 'ticket' && parts.length === 3 && /^[1-9][0-9]*$/.test(parts[1])) {
    return { name, id: parts[2], number: Number(parts[1]), choosing: false };
  }
  return undefined;
}

/**
 * A file 30 s behind the clock is dead only once its time has stayed the same
 * for 10 s more on this process's own clock: after a suspended machine wakes,
 * or the clock is set forward, every file looks old at once, and live owners
 * refresh theirs within 5 s.
 */
function isDead(name, mtimeMs, suspects) {
  if (mtimeMs >= Date.now() - STALE_MS) {
    suspects.delete(name);
    return false;
  }
  const seen = suspects.get(name);
  if (seen?.mtimeMs !== mtimeMs) {
    suspects.set(name, { mtimeMs, since: performance.now() });
    return false;
  }
  return performance.now() - seen.since >= CONFIRM_MS;
}

/** This attempt's own entries and other processes' live ones, deleting the dead. */
async function listEntries(dir, id, suspects) {
  let names;
  try {
    names = await readdir(dir);
  } catch (error) {
    if (error.code === 'ENOENT') return { own: [], others: [] };
    throw error;
  }
  const entries = names.map(parseEntry).filter(Boolean);
  const others = [];
  for (const entry of entries.filter((e) => e.id !== id)) {
    const file = path.join(dir, entry.name);
    const mtimeMs = await stat(file).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (mtimeMs === undefined) continue; // gone meanwhile
    if (isDead(entry.name, mtimeMs, suspects)) await rm(file, { force: true });
    else others.push(entry);
  }
  return { own: entries.filter((e) => e.id === id), others };
}

/** Writes a file that must be new, making the directory again while a leaving process removes it. */
async function writeNew(dir, name) {
  for (;;) {
    try {
      return await writeFile(path.join(dir, name), '', { flag: 'wx' });
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
      await mkdir(dir, { recursive: true });
    }
  }
}

const comesBefore = (a, b) => a.number < b.number || (a.number === b.number && a.id < b.id);

/**
 * One attempt under a new id: true once it holds the lock, false when a stall
 * let its files be deleted as dead (it must queue again, since others may have
 * chosen without seeing it).
 */
async function queueOnce(dir, mine, suspects, waitOrGiveUp) {
  const id = randomUUID();
  const choosing = `choosing.${id}`;
  await writeNew(dir, choosing);
  mine.add(choosing);
  const { others } = await listEntries(dir, id, suspects);
  const number = 1 + Math.max(0, ...others.filter((e) => !e.choosing).map((e) => e.number));
  const ticket = { name: `ticket.${number}.${id}`, id, number };
  await writeNew(dir, ticket.name);
  mine.add(ticket.name);
  mine.delete(choosing);
  const chose = await rm(path.join(dir, choosing)).then(
    () => true,
    (error) => (error.code === 'ENOENT' ? false : Promise.reject(error)),
  );
  if (!chose) return false;
  // The bakery's order: a listing with no one choosing, then listings until no ticket comes first.
  for (let phase = 'choosing'; ; ) {
    const { own, others: now } = await listEntries(dir, id, suspects);
    if (!own.some((e) => e.name === ticket.name)) return false;
    if (phase === 'choosing' && !now.some((e) => e.choosing)) phase = 'tickets';
    else if (phase === 'tickets' && !now.some((e) => !e.choosing && comesBefore(e, ticket))) return true;
    else await waitOrGiveUp();
  }
}

/**
 * Runs `work` while holding the lock of `dir`; a waiter gives up after
 * `giveUpMs`, naming the directory. The directory is removed when the last
 * process leaves it.
 */
export async function whileHoldingLock(dir, work, { giveUpMs = 600_000 } = {}) {
  const mine = new Set();
  const suspects = new Map();
  const refresh = setInterval(() => {
    const now = new Date();
    for (const name of mine) {
      utimes(path.join(dir, name), now, now).catch(() => {
        if (mine.has(name)) console.warn(`${dir}: ${name} was deleted as dead while this process stalled`);
      });
    }
  }, REFRESH_MS);
  refresh.unref();
  const deadline = Date.now() + giveUpMs;
  const waitOrGiveUp = async () => {
    if (Date.now() > deadline) throw new Error(`${dir} is still held by another process after ${giveUpMs / 1000} s`);
    await sleep(POLL_MS);
  };
  const leave = async () => {
    const names = [...mine];
    mine.clear();
    for (const name of names) await rm(path.join(dir, name), { force: true });
  };
  try {
    while (!(await queueOnce(dir, mine, suspects, waitOrGiveUp))) await leave();
    return await work();
  } finally {
    clearInterval(refresh);
    await leave();
    await rmdir(dir).catch(() => {}); // others' files still in it (ENOTEMPTY) or gone already
  }
}
