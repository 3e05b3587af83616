/** Queries of the keys that sign access tokens; the private keys are stored encrypted by the key ring. */
import { desc, gt, isNull, or } from 'drizzle-orm';
import type { JWK } from 'jose';
import type { Db } from '../../db/database.js';
import { signingKeys } from '../../db/schema.js';
import type { SealedValues } from '../../lib/sealed-values.js';

type StoredSigningKey = typeof signingKeys.$inferSelect;
export type SigningKeyRow = Omit<StoredSigningKey, 'privateJwk'> & {
  /** Decrypts the private key (once per key: the caller keeps it); null when it does not open. */
  openPrivateJwk(): JWK | null;
};
export interface NewSigningKey {
  kid: string;
  algorithm: string;
  publicJwk: Record<string, unknown>;
  privateJwk: Record<string, unknown>;
}

const cellOf = (kid: string) => ({ table: 'signing_keys', column: 'private_jwk', row: kid });

export function createSigningKeysDal(db: Db, sealed: SealedValues) {
  const stored = (key: NewSigningKey) => ({
    ...key,
    privateJwk: sealed.seal(cellOf(key.kid), JSON.stringify(key.privateJwk)),
  });
  return {
    /** The signing key and every key retired after `retiredAfter`, newest first. */
    async listVerifying(retiredAfter: Date): Promise<SigningKeyRow[]> {
      const rows = await db
        .select()
        .from(signingKeys)
        .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, retiredAfter)))
        .orderBy(desc(signingKeys.createdAt));
      return rows.map(({ privateJwk, ...row }) => ({
        ...row,
        openPrivateJwk() {
          const text = sealed.open(cellOf(row.kid), privateJwk);
          return text === null ? null : (JSON.parse(text) as JWK);
        },
      }));
    },

    /** The first key; when another instance made one first, the unique index keeps theirs. */
    async insertFirst(key: NewSigningKey): Promise<void> {
      await db.insert(signingKeys).values(stored(key)).onConflictDoNothing();
    },

    /** Retires the signing key and makes `key` the one that signs (in the rotating unit of work). */
    async replaceSigning(key: NewSigningKey): Promise<void> {
      await db.update(signingKeys).set({ retiredAt: new Date() }).where(isNull(signingKeys.retiredAt));
      await db.insert(signingKeys).values(stored(key));
    },
  };
}

export type SigningKeysDal = ReturnType<typeof createSigningKeysDal>;
