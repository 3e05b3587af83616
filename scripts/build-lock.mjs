/**
 * A lock between processes sharing a directory, for the console build
 * (scripts/console-build.mjs). Who holds it is decided by Lamport's bakery over
 * files in the directory: each process writes `choosing.<id>` while it picks a
 * number one above every ticket it sees, then `ticket.<n>.<id>`, and holds the
 * lock once no other process is choosing and no other ticket comes before its
 * own. A process keeps the times of its files fresh; a file 30 s stale was left
 * by a process that died (a killed build) and is deleted by whoever finds it.
 *
 * Written here rather than with proper-lockfile: its takeover of a stale lock
 * (stat, rmdir, mkdir) lets a waiter remove the lock another waiter has just
 * taken, and both hold it (moxystudio/node-proper-lockfile#121, open; the fork
 * named there puts a taken lock back with a rename, which can still drop a third
 * process's). Here every file has one owner and a unique name, so deleting a
 * dead process's files can never remove a live one's.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const STALE_MS = 30_000;
const REFRESH_MS = 5_000;
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

/** The entries of other processes, deleting those a dead process left (stale for 30 s). */
async function othersEntries(dir, id) {
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
    const since = await stat(file).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (since === undefined) continue; // gone meanwhile
    if (since < Date.now() - STALE_MS) await rm(file, { force: true });
    else others.push(entry);
  }
  return { own: entries.filter((e) => e.id === id), others };
}

/** Writes a file that must be new, making the directory again if a releasing process removed it. */
async function writeNew(dir, name) {
  try {
    await writeFile(path.join(dir, name), '', { flag: 'wx' });
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, name), '', { flag: 'wx' });
  }
}

const comesBefore = (a, b) => a.number < b.number || (a.number === b.number && a.id < b.id);

/**
 * Runs `work` while holding the lock of `dir`; a waiter gives up after
 * `giveUpMs`, naming the directory. The directory is removed when the last
 * process leaves it.
 */
export async function whileHoldingLock(dir, work, { giveUpMs = 600_000 } = {}) {
  const id = randomUUID();
  const mine = new Set();
  const refresh = setInterval(() => {
    const now = new Date();
    for (const name of mine) {
      utimes(path.join(dir, name), now, now).catch(() =>
        console.warn(`${dir}: ${name} was deleted as stale while this process held or awaited the lock`),
      );
    }
  }, REFRESH_MS);
  refresh.unref();
  const deadline = Date.now() + giveUpMs;
  const waitOrGiveUp = async () => {
    if (Date.now() > deadline) throw new Error(`${dir} is still held by another process after ${giveUpMs / 1000} s`);
    await sleep(POLL_MS);
  };
  try {
    for (;;) {
      const choosing = `choosing.${id}`;
      await writeNew(dir, choosing);
      mine.add(choosing);
      const { others } = await othersEntries(dir, id);
      const number = 1 + Math.max(0, ...others.filter((e) => !e.choosing).map((e) => e.number));
      const ticket = { name: `ticket.${number}.${id}`, id, number };
      await writeNew(dir, ticket.name);
      mine.add(ticket.name);
      mine.delete(choosing);
      await rm(path.join(dir, choosing), { force: true });
      // The bakery's order matters: a listing with no one choosing, then listings until no ticket comes first.
      let lost = false;
      for (let phase = 'choosing'; phase !== 'held'; ) {
        const { own, others: now } = await othersEntries(dir, id);
        if (!own.some((e) => e.name === ticket.name)) {
          lost = true; // deleted as stale while this process stalled: queue again
          break;
        }
        if (phase === 'choosing' && !now.some((e) => e.choosing)) phase = 'tickets';
        else if (phase === 'tickets' && !now.some((e) => !e.choosing && comesBefore(e, ticket))) phase = 'held';
        else await waitOrGiveUp();
      }
      if (!lost) break;
      mine.delete(ticket.name);
    }
    return await work();
  } finally {
    clearInterval(refresh);
    for (const name of mine) await rm(path.join(dir, name), { force: true });
    await rmdir(dir).catch(() => {}); // others' files still in it (ENOTEMPTY) or gone already
  }
}
