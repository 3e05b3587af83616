/** Queries of the keys that sign access tokens. */
import { desc, gt, isNull, or } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { signingKeys } from '../../db/schema.js';

export type SigningKeyRow = typeof signingKeys.$inferSelect;
export type NewSigningKey = Pick<SigningKeyRow, 'kid' | 'algorithm' | 'publicJwk' | 'privateJwk'>;

export function createSigningKeysDal(db: Db) {
  return {
    /** The signing key and every key retired after `retiredAfter`, newest first. */
    async listVerifying(retiredAfter: Date): Promise<SigningKeyRow[]> {
      return db
        .select()
        .from(signingKeys)
        .where(or(isNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, retiredAfter)))
        .orderBy(desc(signingKeys.createdAt));
    },

    /** The first key; when another instance made one first, the unique index keeps theirs. */
    async insertFirst(key: NewSigningKey): Promise<void> {
      await db.insert(signingKeys).values(key).onConflictDoNothing();
    },

    /** Retires the signing key and makes `key` the one that signs (in the rotating unit of work). */
    async replaceSigning(key: NewSigningKey): Promise<void> {
      await db.update(signingKeys).set({ retiredAt: new Date() }).where(isNull(signingKeys.retiredAt));
      await db.insert(signingKeys).values(key);
    },
  };
}

export type SigningKeysDal = ReturnType<typeof createSigningKeysDal>;
