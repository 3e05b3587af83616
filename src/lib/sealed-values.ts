/**
 * Secrets as the tables hold them: encrypted under the key ring with the
 * table, column and row as additional authenticated data (a value copied to
 * another row or column no longer opens), or, for codes only ever compared,
 * an HMAC-SHA-256 under the digest key (kept in the database, encrypted by the
 * ring: rotating the ring re-encrypts that one key and every code stays good).
 * The data access layers seal on write and open on read; services see plain
 * values. A value that does not open is logged by table, column and row, never
 * by content, and read as absent.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type KeyRing, MissingKeyError, TamperedValueError } from './key-ring.js';
import type { Log } from './log.js';

/** Where a value lives: bound into its encryption. */
export interface Cell {
  table: string;
  column: string;
  row: string;
}

const DIGEST_PREFIX = 'hmac:v1:';
/** Webhook secrets opened, by their stored text: an attempt signs without decrypting again. */
const OPENED_CACHE_SIZE = 10_000;

export const aadOf = (cell: Cell) => `${cell.table}.${cell.column}:${cell.row}`;

export function isDigest(stored: string): boolean {
  return stored.startsWith(DIGEST_PREFIX);
}

export function createSealedValues(ring: KeyRing, log: Log) {
  let digestKey: { id: string; key: Buffer } | undefined;
  const opened = new Map<string, string>();

  function open(cell: Cell, stored: string | null): string | null {
    if (stored === null) return null;
    try {
      return ring.decrypt(stored, aadOf(cell));
    } catch (err) {
      if (!(err instanceof TamperedValueError || err instanceof MissingKeyError)) throw err;
      log.warn(
        { ...cell, ...(err instanceof MissingKeyError ? { kid: err.kid } : {}) },
        'a stored secret does not open (tampered, moved or under a key the ring lacks); treated as absent',
      );
      return null;
    }
  }

  function keyed(): { id: string; key: Buffer } {
    if (!digestKey) throw new Error('sealed values: the digest key is not loaded (secrets.prepare() was not run)');
    return digestKey;
  }

  return {
    ring,
    seal: (cell: Cell, plaintext: string): string => ring.encrypt(plaintext, aadOf(cell)),
    open,
    /** Like open, remembered by the stored text (which a new value or a rotation changes). */
    openCached(cell: Cell, stored: string | null): string | null {
      if (stored === null) return null;
      const key = `${aadOf(cell)}|${stored}`;
      const known = opened.get(key);
      if (known !== undefined) return known;
      const value = open(cell, stored);
      if (value === null) return null;
      if (opened.size >= OPENED_CACHE_SIZE) opened.delete(opened.keys().next().value!);
      opened.set(key, value);
      return value;
    },
    /** The digest kept of a code: an HMAC of its SHA-256, so digests stored before the ring upgrade in place. */
    digest(sha256: string): string {
      const { id, key } = keyed();
      return `${DIGEST_PREFIX}${id}:${createHmac('sha256', key).update(sha256).digest('base64url')}`;
    },
    /** Whether `stored` is the digest of `sha256`, compared in constant time. */
    digestMatches(stored: string, sha256: string): boolean {
      const given = Buffer.from(this.digest(sha256));
      const kept = Buffer.from(stored);
      return given.length === kept.length && timingSafeEqual(given, kept);
    },
    useDigestKey(id: string, key: Buffer): void {
      digestKey = { id, key };
    },
  };
}

export type SealedValues = ReturnType<typeof createSealedValues>;
