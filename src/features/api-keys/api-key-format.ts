/**
 * API key values: `fgk_` + 32 base62 characters from the CSPRNG (190 bits) +
 * a 6-character base62 CRC32 of the random part (GitHub token style), so a
 * mistyped or truncated key is refused without touching the database.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const API_KEY_PREFIX = 'fgk_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: number, width: number): string {
  let out = '';
  for (let v = value; out.length < width; v = Math.floor(v / 62)) out = ALPHABET[v % 62] + out;
  return out;
}

/** Uniform base62 characters: bytes ≥ 248 are rejected to avoid modulo bias. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function checksum(random: string): string {
  return base62(crc32(random), CHECKSUM_LENGTH);
}

export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${API_KEY_PREFIX}${random}${checksum(random)}`;
}

/** Shape and checksum only: cheap, and no database read for garbage. */
export function isWellFormedApiKey(value: string): boolean {
  if (!SHAPE.test(value)) return false;
  const body = value.slice(API_KEY_PREFIX.length);
  return checksum(body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH);
}

/** The last 4 characters belong to the checksum, so the mask shows none of the secret part. */
export function lastFour(key: string): string {
  return key.slice(-4);
}

export function maskApiKey(prefix: string, last4: string): string {
  return `${prefix}****${last4}`;
}
