/**
 * Secrets at rest as a whole (docs/production.md, "Keys and secrets"): at
 * start, refuse a database that needs a key the ring lacks, then encrypt what
 * was stored in plain text before (and turn bare SHA-256 digests of codes into
 * HMACs), in one transaction, and load the digest key. `rotate` re-encrypts
 * every value under the ring's first key in resumable batches; `check` counts
 * the values per key id.
 */
import { randomBytes } from 'node:crypto';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { ConfigError } from '../../errors.js';
import { OPERATOR_CONTEXT } from '../../lib/change-context.js';
import type { SealedValues } from '../../lib/sealed-values.js';
import { SECRET_COLUMNS, type SecretColumn, type SecretsDal } from './secrets-dal.js';

const ROTATE_BATCH = 500;

export interface SecretsServiceDeps {
  uow: UnitOfWork<{ secrets: SecretsDal }>;
  dal: Pick<SecretsDal, 'kidCounts'>;
  sealed: Pick<SealedValues, 'ring' | 'seal' | 'open' | 'digest' | 'useDigestKey'>;
}

export interface KeyUse {
  kid: string;
  values: number;
  inRing: boolean;
}

const cellOf = (c: SecretColumn, row: string) => ({ table: c.table, column: c.column, row });
const DIGEST_KEY = SECRET_COLUMNS.find((c) => c.table === 'digest_keys')!;

export function createSecretsService({ uow, dal, sealed }: SecretsServiceDeps) {
  /** The key ids the stored values need, with how many each; the ring's own first. */
  async function check(): Promise<KeyUse[]> {
    const counts = new Map<string, number>(sealed.ring.kids.map((kid) => [kid, 0]));
    for (const row of await dal.kidCounts()) counts.set(row.kid, (counts.get(row.kid) ?? 0) + row.count);
    return [...counts].map(([kid, values]) => ({ kid, values, inRing: sealed.ring.kids.includes(kid) }));
  }

  async function refuseMissingKeys(): Promise<void> {
    const missing = (await check()).find((use) => !use.inRing);
    if (missing)
      throw new ConfigError(
        `stored secrets need key id "${missing.kid}" (${missing.values} value(s)), which the key ring lacks: add its entry back to FEEGATE_SECRET_KEYS or FEEGATE_SECRET_KEYS_FILE`,
      );
  }

  return {
    check,

    /** Before anything reads a secret: refuses missing keys, upgrades plain values, loads the digest key. */
    async prepare(): Promise<{ upgraded: number }> {
      await refuseMissingKeys();
      return uow.write(OPERATOR_CONTEXT, async ({ dal: { secrets } }) => {
        await secrets.lockUpgrade();
        let upgraded = 0;
        const stored = await secrets.digestKey();
        let digestKey = stored && sealed.open(cellOf(DIGEST_KEY, stored.row), stored.value);
        let digestKeyId = stored?.row;
        // None yet, or it does not open (logged): a new one; codes kept under the old one no longer match.
        if (!digestKey || !digestKeyId) {
          digestKeyId = `d${randomBytes(6).toString('hex')}`;
          digestKey = randomBytes(32).toString('base64');
          await secrets.insertDigestKey(digestKeyId, sealed.seal(cellOf(DIGEST_KEY, digestKeyId), digestKey));
        }
        sealed.useDigestKey(digestKeyId, Buffer.from(digestKey, 'base64'));
        for (const column of SECRET_COLUMNS) {
          for (const value of await secrets.legacyValues(column)) {
            const next =
              column.kind === 'digest'
                ? sealed.digest(value.value)
                : sealed.seal(cellOf(column, value.row), value.value);
            await secrets.replace(column, value, next);
            upgraded++;
          }
        }
        return { upgraded };
      });
    },

    /**
     * Re-encrypts every value not under the ring's first key, a batch per
     * transaction (an interrupted run is taken up by the next); answers the
     * count per column, and how many did not open (left as they are, logged).
     */
    async rotate(): Promise<Array<{ column: string; rotated: number; unreadable: number }>> {
      await refuseMissingKeys();
      const kid = sealed.ring.primaryKid;
      const report = [];
      for (const column of SECRET_COLUMNS.filter((c) => c.kind === 'encrypted')) {
        let rotated = 0;
        let unreadable = 0;
        let after = '';
        for (let more = true; more; ) {
          const batch = await uow.write(OPERATOR_CONTEXT, async ({ dal: { secrets } }) => {
            const values = await secrets.staleBatch(column, kid, after, ROTATE_BATCH);
            for (const value of values) {
              const plain = sealed.open(cellOf(column, value.row), value.value);
              if (plain === null) unreadable++;
              else {
                await secrets.replace(column, value, sealed.seal(cellOf(column, value.row), plain));
                rotated++;
              }
            }
            return values;
          });
          after = batch.at(-1)?.row ?? after;
          more = batch.length === ROTATE_BATCH;
        }
        report.push({ column: `${column.table}.${column.column}`, rotated, unreadable });
      }
      return report;
    },
  };
}

export type SecretsService = ReturnType<typeof createSecretsService>;
