/**
 * One process at a time on an embedded data directory. PGlite keeps the
 * database in its own memory and writes it back as it likes: two processes on
 * one directory each see only their own writes, and whatever one of them
 * flushes last wins (silent loss). The first process to open the directory holds
 * `feegate.lock` in it until it closes the database or exits; any other stops
 * at once with DataDirLockedError.
 *
 * Written here rather than with proper-lockfile: that lock stays alive only
 * while a timer refreshes its mtime, and PGlite runs SQL on the event loop (a
 * large bulk assignment holds it for seconds), so a busy server would look dead
 * and lose its lock to the next process. A file created exclusively with the
 * holder's pid needs no heartbeat, and a holder that died (crash, SIGKILL) is
 * seen at once with kill(pid, 0) and /proc (a zombie is dead too), so a
 * restart after a crash is not refused.
 */
import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataDirLockedError } from '../errors.js';
import type { Database } from './database-core.js';

export const LOCK_FILE = 'feegate.lock';

interface LockOwner {
  pid: number;
  host: string;
  token: string;
  since: string;
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' && typeof owner.token === 'string'
      ? (owner as LockOwner)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The state letter of /proc/<pid>/stat (Linux), read after the last ')' since
 * the command name in parentheses may hold spaces and parentheses itself;
 * undefined where there is no /proc.
 */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/**
 * A zombie (exited, not yet reaped by its parent: state Z, or X while it is
 * being reaped) still answers kill(pid, 0), yet holds nothing: a server that
 * crashed under a supervisor that has not reaped it yet must not block its own
 * restart.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: a process of another user holds the pid, alive unless it is a zombie.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procState(pid);
  return state !== 'Z' && state !== 'X';
}

/** Tokens of the locks this process holds. */
const heldHere = new Set<string>();

/**
 * A holder is certainly gone when it ran on this host and its pid is free, or
 * has this process's pid without being one of its locks (a container restarted
 * with the same pid). A holder on another host (a shared volume) cannot be
 * checked and counts as alive.
 */
function isGone(owner: LockOwner | undefined): boolean {
  if (!owner) return true; // unreadable: the file is written whole before it is linked, so this is debris
  if (owner.host !== os.hostname()) return false;
  if (owner.pid === process.pid) return !heldHere.has(owner.token);
  return !isRunning(owner.pid);
}

/** Moves a dead holder's file away; puts it back if a live process took the lock meanwhile. */
function removeDeadLock(file: string, dead: LockOwner | undefined): void {
  const moved = `${file}.${process.pid}.stale`;
  try {
    renameSync(file, moved);
  } catch {
    return; // already taken over by another process
  }
  const found = readOwner(moved);
  if (found && found.token !== dead?.token) {
    try {
      linkSync(moved, file);
    } catch {
      // someone else holds it now; ours to drop either way
    }
  }
  unlinkSync(moved);
}

function lockedMessage(dataDir: string, file: string, owner: LockOwner | undefined): string {
  const who = owner
    ? `process ${owner.pid}${owner.host === os.hostname() ? '' : ` on ${owner.host}`}, since ${owner.since}`
    : 'another process';
  const remote = owner && owner.host !== os.hostname() ? `, or remove ${file} if no feegate runs there` : '';
  return `the embedded database in ${dataDir} is in use by ${who}; stop that process first${remote}, or set DATABASE_URL to a PostgreSQL server to run several processes`;
}

/** Takes the lock or throws DataDirLockedError; returns its release (idempotent). */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, LOCK_FILE);
  const owner: LockOwner = {
    pid: process.pid,
    host: os.hostname(),
    token: randomUUID(),
    since: new Date().toISOString(),
  };
  // Written whole under a private name, then linked: link() fails if the lock
  // exists, and a reader never sees a half-written file.
  const draft = `${file}.${process.pid}.${owner.token}`;
  writeFileSync(draft, `${JSON.stringify(owner)}\n`);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(draft, file);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readOwner(file);
      if (attempt > 2 || !isGone(holder)) throw new DataDirLockedError(lockedMessage(dataDir, file, holder));
      removeDeadLock(file, holder);
    }
  } finally {
    unlinkSync(draft);
  }
  heldHere.add(owner.token);
  const release = () => {
    process.removeListener('exit', release);
    heldHere.delete(owner.token);
    if (readOwner(file)?.token === owner.token) unlinkSync(file);
  };
  // process.exit() without closing the database still frees the directory.
  process.once('exit', release);
  return release;
}

/** Opens an embedded database under the directory's lock, released when it closes. */
export async function holdingDataDir(dataDir: string, open: () => Promise<Database>): Promise<Database> {
  if (dataDir.startsWith('memory://')) return open();
  const release = lockDataDir(dataDir);
  let database: Database;
  try {
    database = await open();
  } catch (err) {
    release();
    throw err;
  }
  const close = database.close.bind(database);
  database.close = async () => {
    try {
      await close();
    } finally {
      release();
    }
  };
  return database;
}
