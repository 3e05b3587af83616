/**
 * The key ring's rows of the configuration (src/config.ts): how FEEGATE_SECRET_KEYS
 * and FEEGATE_SECRET_KEYS_FILE are read, refused in one line naming the variable
 * (never a key), and the ring a configuration names.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Config } from './config.js';
import type { Kind } from './config-kinds.js';
import { ConfigError } from './errors.js';
import { type KeyRing, KeyRingFormatError, parseKeyRing } from './lib/key-ring.js';

/** FEEGATE_SECRET_KEYS: the key ring; a refusal names the variable and the entry, never a key. */
export const KEY_RING: Kind<KeyRing> = {
  values: 'comma-separated <kid>:<base64 of 32 random bytes>',
  parse(raw, name) {
    try {
      return parseKeyRing(raw);
    } catch (err) {
      if (err instanceof KeyRingFormatError) throw new ConfigError(`${name}: ${err.message}`);
      throw err;
    }
  },
};

/** FEEGATE_SECRET_KEYS_FILE: a file holding the ring as FEEGATE_SECRET_KEYS would (container secrets). */
export const KEY_RING_FILE: Kind<KeyRing> = {
  values: 'a file with the same content',
  parse(raw, name) {
    let content: string;
    try {
      content = readFileSync(raw.trim(), 'utf8');
    } catch (err) {
      throw new ConfigError(`${name}: cannot read ${raw.trim()} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return KEY_RING.parse(content, name);
  },
};

/** The key ring the settings name; the embedded database's own is added at start (src/key-ring-file.ts). */
export function keyRingOf(config: Config): KeyRing {
  const ring = config.secretKeys ?? config.secretKeysFile;
  if (!ring) throw new ConfigError(NO_KEY_RING);
  return ring;
}

export const NO_KEY_RING =
  'no key ring: set FEEGATE_SECRET_KEYS or FEEGATE_SECRET_KEYS_FILE (feegate secrets generate-key prints an entry)';

/** The tests' key ring (one fixed key, so that a test and the command line it runs share it); never a deployment's. */
export const TEST_SECRET_KEYS = `test:${createHash('sha256').update('feegate test key ring').digest('base64')}`;
