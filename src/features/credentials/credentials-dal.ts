/**
 * A user's stored credentials: the password hash, the TOTP secret with its
 * last accepted step, and the recovery codes. Login (auth) and a user's own
 * settings (users) both check and change them; the users DAL includes these.
 */
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { userRecoveryCodes, users } from '../../db/schema.js';
import type { SealedValues } from '../../lib/sealed-values.js';

/** Where a user's TOTP secret is stored, bound into its encryption (docs/design.md, "Secrets at rest"). */
export const totpCell = (id: string) => ({ table: 'users', column: 'totp_secret', row: id });

export function createCredentialsDal(db: Db, sealed: SealedValues) {
  return {
    /** The stored password hash of a login user (a change of password checks the current one). */
    async passwordHash(id: string): Promise<string | null> {
      const [row] = await db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, id));
      return row?.hash ?? null;
    },

    /** A new password; `temporary` sets FORCE_CHANGE_PASSWORD. */
    async setPassword(id: string, passwordHash: string, temporary: boolean): Promise<void> {
      await db
        .update(users)
        .set({ passwordHash, mustChangePassword: temporary, updatedAt: sql`now()` })
        .where(eq(users.id, id));
    },

    /** The secret of a user's TOTP: pending until a first code is verified; null when it does not open. */
    async totp(id: string) {
      const [row] = await db
        .select({ secret: users.totpSecret, enabled: users.totpEnabled })
        .from(users)
        .where(eq(users.id, id));
      return row && { ...row, secret: sealed.open(totpCell(id), row.secret) };
    },

    async setPendingTotp(id: string, secret: string): Promise<void> {
      await db
        .update(users)
        .set({ totpSecret: sealed.seal(totpCell(id), secret), totpEnabled: false, totpLastStep: null })
        .where(eq(users.id, id));
    },

    async setTotpEnabled(id: string, enabled: boolean): Promise<void> {
      await db
        .update(users)
        .set(enabled ? { totpEnabled: true } : { totpEnabled: false, totpSecret: null, totpLastStep: null })
        .where(eq(users.id, id));
      if (!enabled) await db.delete(userRecoveryCodes).where(eq(userRecoveryCodes.userId, id));
    },

    /**
     * Records `step` as the last accepted one when it is later than it: false
     * when a code of that step (or a later one) was already accepted. One
     * statement, so two uses of one code at once cannot both win.
     */
    async acceptTotpStep(id: string, step: number): Promise<boolean> {
      const rows = await db
        .update(users)
        .set({ totpLastStep: step })
        .where(and(eq(users.id, id), or(isNull(users.totpLastStep), sql`${users.totpLastStep} < ${step}`)))
        .returning({ id: users.id });
      return rows.length === 1;
    },

    /** `codeHashes` are SHA-256 digests; an HMAC of each is kept. */
    async replaceRecoveryCodes(id: string, codeHashes: string[]): Promise<void> {
      await db.delete(userRecoveryCodes).where(eq(userRecoveryCodes.userId, id));
      await db
        .insert(userRecoveryCodes)
        .values(codeHashes.map((codeHash) => ({ userId: id, codeHash: sealed.digest(codeHash) })));
    },

    /** Spends a recovery code (given as its SHA-256): false when it is not one of the user's or was used. */
    async useRecoveryCode(id: string, codeHash: string): Promise<boolean> {
      const rows = await db
        .update(userRecoveryCodes)
        .set({ usedAt: sql`now()` })
        .where(
          and(
            eq(userRecoveryCodes.userId, id),
            eq(userRecoveryCodes.codeHash, sealed.digest(codeHash)),
            isNull(userRecoveryCodes.usedAt),
          ),
        )
        .returning({ id: userRecoveryCodes.userId });
      return rows.length === 1;
    },
  };
}

export type CredentialsDal = ReturnType<typeof createCredentialsDal>;
