/**
 * The key ring that keeps secrets at rest (docs/production.md, "Keys and
 * secrets"): entries `<kid>:<base64 of 32 random bytes>`, the first encrypts,
 * every one decrypts. Node's crypto does the work: AES-256-GCM with a fresh
 * 96-bit nonce per value and the caller's additional authenticated data, under a
 * key HKDF derives from the entry, so the ring's own bytes never key anything
 * directly. A value is stored as `enc:v1:<kid>:<nonce>:<ciphertext+tag>`
 * (base64url), so any entry of the ring can open it.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';

const PREFIX = 'enc:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KID = /^[A-Za-z0-9_-]{1,32}$/;
/** 32 bytes in base64: 43 characters and the padding. */
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=?$/;

/** A ring entry is refused; the message never holds the entry's key. */
export class KeyRingFormatError extends Error {
  override name = 'KeyRingFormatError';
}

/** A stored value names a key id the ring lacks. */
export class MissingKeyError extends Error {
  override name = 'MissingKeyError';
  constructor(readonly kid: string) {
    super(`a stored secret needs key id "${kid}", which the key ring lacks`);
  }
}

/** A stored value failed authentication: tampered, moved to another row, or not ours. */
export class TamperedValueError extends Error {
  override name = 'TamperedValueError';
}

export interface KeyRing {
  /** The key id that encrypts. */
  readonly primaryKid: string;
  readonly kids: readonly string[];
  encrypt(plaintext: string, aad: string): string;
  /** Throws MissingKeyError or TamperedValueError. */
  decrypt(stored: string, aad: string): string;
}

/** Whether `stored` is a value this ring's format encrypted (of any key). */
export function isEncrypted(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The key id an encrypted value names, or null for any other text. */
export function kidOf(stored: string): string | null {
  return isEncrypted(stored) ? (stored.slice(PREFIX.length).split(':')[0] ?? null) : null;
}

/** A new ring entry, `<kid>:<base64 key>`; the kid tells its creation date apart from others. */
export function generateKeyEntry(now = new Date()): string {
  const kid = `k${now.toISOString().slice(0, 10).replaceAll('-', '')}${randomBytes(3).toString('hex')}`;
  return `${kid}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

/** Parses the ring's text; a bad entry throws KeyRingFormatError saying which (by position, never by content). */
export function parseKeyRing(text: string): KeyRing {
  const entries = text
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new KeyRingFormatError('must list at least one <kid>:<base64 key>');
  const keys = new Map<string, Buffer>();
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const kid = entry.slice(0, colon);
    const material = Buffer.from(entry.slice(colon + 1), 'base64');
    if (colon < 1 || !KID.test(kid))
      throw new KeyRingFormatError(
        `entry ${index + 1} must be <kid>:<base64 key>, the kid 1-32 letters, digits, - or _`,
      );
    if (!BASE64_KEY.test(entry.slice(colon + 1)) || material.length !== KEY_BYTES)
      throw new KeyRingFormatError(`entry ${index + 1} (kid ${kid}) must hold the base64 of exactly 32 bytes`);
    if (keys.has(kid)) throw new KeyRingFormatError(`kid ${kid} appears twice`);
    keys.set(kid, Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), 'feegate secrets at rest v1', KEY_BYTES)));
  });
  const kids = [...keys.keys()];
  const primaryKid = kids[0]!;
  const ring: KeyRing = {
    primaryKid,
    kids,
    encrypt(plaintext, aad) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keys.get(primaryKid)!, nonce);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}${primaryKid}:${nonce.toString('base64url')}:${sealed.toString('base64url')}`;
    },
    decrypt(stored, aad) {
      const [kid, nonceText, sealedText, extra] = stored.slice(PREFIX.length).split(':');
      if (!isEncrypted(stored) || !kid || nonceText === undefined || sealedText === undefined || extra !== undefined)
        throw new TamperedValueError('not an encrypted value');
      const key = keys.get(kid);
      if (!key) throw new MissingKeyError(kid);
      const nonce = Buffer.from(nonceText, 'base64url');
      const sealed = Buffer.from(sealedText, 'base64url');
      if (nonce.length !== NONCE_BYTES || sealed.length < TAG_BYTES) throw new TamperedValueError('malformed');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, nonce);
        decipher.setAAD(Buffer.from(aad, 'utf8'));
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new TamperedValueError('authentication failed');
      }
    },
  };
  // Logged or serialised by mistake, the ring shows its key ids only.
  Object.defineProperties(ring, {
    toJSON: { value: () => `[key ring ${kids.join(',')}]` },
    [inspect.custom]: { value: () => `[key ring ${kids.join(',')}]` },
  });
  return ring;
}
