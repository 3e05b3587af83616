/** Queries of the keys that sign access tokens. Every function takes an optional transaction. */
import { desc, gt, isNull, or } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/database.js';
import { signingKeys } from '../../db/schema.js';
import { signingKeysNotice } from './auth-change-feed.js';

export type SigningKeyRow = typeof signingKeys.$inferSelect;
export type NewSigningKey = Pick<SigningKeyRow, 'kid' | 'algorithm' | 'publicJwk' | 'privateJwk'>;

export function createSigningKeysDal(db: Db) {
  return {
    /** The signing key and every key retired after `retiredAfter`, newest first. */
    async listVerifying(retiredAfter: Date, tx: DbOrTx = db): Promise<SigningKeyRow[]> {
      return tx
        .select()
        .from(signingKeys)
        .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, retiredAfter)))
        .orderBy(desc(signingKeys.createdAt));
    },

    /** The first key; when another instance made one first, the unique index keeps theirs. */
    async insertFirst(key: NewSigningKey, tx: DbOrTx = db): Promise<void> {
      await tx.insert(signingKeys).values(key).onConflictDoNothing();
    },

    /** Retires the signing key and makes `key` the one that signs; every instance is told. */
    async rotate(key: NewSigningKey): Promise<void> {
      await db.transaction(async (tx) => {
        await tx.update(signingKeys).set({ retiredAt: new Date() }).where(isNull(signingKeys.retiredAt));
        await tx.insert(signingKeys).values(key);
        await tx.execute(signingKeysNotice());
      });
    },
  };
}

export type SigningKeysDal = ReturnType<typeof createSigningKeysDal>;
