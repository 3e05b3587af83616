/**
 * Where the key ring comes from at start: the settings (FEEGATE_SECRET_KEYS or
 * FEEGATE_SECRET_KEYS_FILE), or, on the embedded database only, the file
 * `secret-keys` in its directory, written (mode 0600) at the first start. A
 * PostgreSQL deployment must bring its own: a ring kept beside a shared
 * database would be in its backups' reach.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Config, NO_KEY_RING } from './config.js';
import { ConfigError } from './errors.js';
import { generateKeyEntry, KeyRingFormatError, parseKeyRing } from './lib/key-ring.js';

export interface RingedConfig {
  config: Config;
  /** The file a ring was generated into at this start, to be said in the start banner. */
  generated?: string;
}

export function withKeyRing(config: Config): RingedConfig {
  if (config.secretKeys || config.secretKeysFile) return { config };
  if (config.databaseUrl) throw new ConfigError(`${NO_KEY_RING}; on PostgreSQL the service does not start without one`);
  const file = path.join(config.dataDir, 'secret-keys');
  let generated: string | undefined;
  mkdirSync(config.dataDir, { recursive: true });
  try {
    // wx: two processes starting at once never overwrite each other's ring.
    writeFileSync(file, `${generateKeyEntry()}\n`, { flag: 'wx', mode: 0o600 });
    generated = file;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  try {
    return {
      config: { ...config, secretKeys: parseKeyRing(readFileSync(file, 'utf8')) },
      ...(generated ? { generated } : {}),
    };
  } catch (err) {
    if (err instanceof KeyRingFormatError) throw new ConfigError(`${file}: ${err.message}`);
    throw err;
  }
}
