/** Queries of back-office users (with their credentials: credentials-dal.ts), their reset codes and their customer's MFA rule. */
import { and, count, desc, eq, gt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { apiKeys, customers, passwordResetCodes, users } from '../../db/schema.js';
import type { Role, UserType } from '../../lib/principal.js';
import type { SealedValues } from '../../lib/sealed-values.js';
import { createCredentialsDal } from '../credentials/credentials-dal.js';

export interface UserFilter {
  customerId: string;
  email?: string | undefined;
  merchantId?: string | undefined;
  type?: UserType | undefined;
}

/** What PATCH /v1/users/{id} may change. */
export interface UserChanges {
  name?: string | null;
  description?: string | null;
  role?: Role;
  enabled?: boolean;
}

const userColumns = {
  id: users.id,
  email: users.email,
  name: users.name,
  description: users.description,
  type: users.type,
  customerId: users.customerId,
  merchantId: users.merchantId,
  login: sql<boolean>`${users.passwordHash} IS NOT NULL`,
  role: users.role,
  enabled: users.enabled,
  mustChangePassword: users.mustChangePassword,
  totpEnabled: users.totpEnabled,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

export type UserRow = {
  id: string;
  email: string;
  name: string | null;
  description: string | null;
  type: UserType;
  customerId: string;
  merchantId: string | null;
  login: boolean;
  role: Role | null;
  enabled: boolean;
  mustChangePassword: boolean;
  totpEnabled: boolean;
  createdAt: Date;
  updatedAt: Date;
};

export function createUsersDal(db: Db, sealed: SealedValues) {
  const inCustomer = (customerId: string, id: string) => and(eq(users.customerId, customerId), eq(users.id, id));

  return {
    ...createCredentialsDal(db, sealed),

    async list(filter: UserFilter, page: { limit: number; offset: number }) {
      const conditions: SQL[] = [eq(users.customerId, filter.customerId)];
      if (filter.email !== undefined) conditions.push(eq(users.email, filter.email));
      if (filter.merchantId !== undefined) conditions.push(eq(users.merchantId, filter.merchantId));
      if (filter.type !== undefined) conditions.push(eq(users.type, filter.type));
      const where = and(...conditions);
      const [rows, [total]] = await Promise.all([
        db
          .select(userColumns)
          .from(users)
          .where(where)
          .orderBy(desc(users.createdAt), desc(users.id))
          .limit(page.limit)
          .offset(page.offset),
        db.select({ n: count() }).from(users).where(where),
      ]);
      return { rows: rows as UserRow[], total: total?.n ?? 0 };
    },

    /** A user of the customer, as the listing shows it. */
    async find(customerId: string, id: string): Promise<UserRow | undefined> {
      const [row] = await db.select(userColumns).from(users).where(inCustomer(customerId, id));
      return row as UserRow | undefined;
    },

    /** A user of the customer, locked for a change. */
    async lock(customerId: string, id: string): Promise<UserRow | undefined> {
      const [row] = await db.select(userColumns).from(users).where(inCustomer(customerId, id)).for('update');
      return row as UserRow | undefined;
    },

    /** A login user by e-mail, anywhere (the operator's commands, a forgotten password). */
    async findLoginUser(email: string): Promise<UserRow | undefined> {
      const [row] = await db
        .select(userColumns)
        .from(users)
        .where(and(eq(users.email, email), sql`${users.passwordHash} IS NOT NULL`));
      return row as UserRow | undefined;
    },

    /** A new login user; undefined when its e-mail already names a login user. */
    async insertLoginUser(user: {
      email: string;
      customerId: string;
      name: string | null;
      description: string | null;
      role: Role;
      passwordHash: string;
    }): Promise<string | undefined> {
      const [row] = await db
        .insert(users)
        .values({ ...user, type: 'CUSTOMER', mustChangePassword: true })
        .onConflictDoNothing()
        .returning({ id: users.id });
      return row?.id;
    },

    async update(id: string, changes: UserChanges): Promise<void> {
      await db
        .update(users)
        .set({ ...changes, updatedAt: sql`now()` })
        .where(eq(users.id, id));
    },

    /**
     * Locks every enabled ADMIN of a customer and answers their ids: two changes
     * of two ADMINs at once wait for each other, so they cannot both leave none.
     */
    async lockEnabledAdmins(customerId: string): Promise<string[]> {
      const rows = await db
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.customerId, customerId), eq(users.role, 'ADMIN'), eq(users.enabled, true)))
        .for('update');
      return rows.map((r) => r.id);
    },

    /** The one live reset code of a user (given as its SHA-256, an HMAC of it kept), replacing any earlier one. */
    async putResetCode(userId: string, sha256: string, expiresAt: Date): Promise<void> {
      const codeHash = sealed.digest(sha256);
      await db
        .insert(passwordResetCodes)
        .values({ userId, codeHash, expiresAt })
        .onConflictDoUpdate({
          target: passwordResetCodes.userId,
          set: { codeHash, expiresAt, attempts: 0, createdAt: sql`now()` },
        });
    },

    /**
     * Counts an attempt at a live reset code, locked, and answers whether `sha256`
     * is its code's digest, with the count before this attempt.
     */
    async spendResetAttempt(userId: string, sha256: string) {
      const [row] = await db
        .update(passwordResetCodes)
        .set({ attempts: sql`${passwordResetCodes.attempts} + 1` })
        .where(and(eq(passwordResetCodes.userId, userId), gt(passwordResetCodes.expiresAt, sql`now()`)))
        .returning({ codeHash: passwordResetCodes.codeHash, attempts: passwordResetCodes.attempts });
      return row && { attempts: row.attempts, matches: sealed.digestMatches(row.codeHash, sha256) };
    },

    /** The live reset code of a user, locked until the change that spends it commits, and whether `sha256` is its code. */
    async lockResetCode(userId: string, sha256: string) {
      const [row] = await db
        .select({ codeHash: passwordResetCodes.codeHash })
        .from(passwordResetCodes)
        .where(and(eq(passwordResetCodes.userId, userId), gt(passwordResetCodes.expiresAt, sql`now()`)))
        .for('update');
      return row && { matches: sealed.digestMatches(row.codeHash, sha256) };
    },

    async deleteResetCode(userId: string): Promise<void> {
      await db.delete(passwordResetCodes).where(eq(passwordResetCodes.userId, userId));
    },

    /** The hashes of an integration user's keys, whose cached verifications a change of the user drops. */
    async keyHashes(userId: string): Promise<string[]> {
      const rows = await db.select({ hash: apiKeys.keyHash }).from(apiKeys).where(eq(apiKeys.userId, userId));
      return rows.map((r) => r.hash);
    },

    async customer(id: string) {
      const [row] = await db
        .select({
          id: customers.id,
          name: customers.name,
          requireMfa: customers.requireMfa,
          feeChangeApproval: sql<'NONE' | 'REQUIRED'>`${customers.feeChangeApproval}`,
        })
        .from(customers)
        .where(eq(customers.id, id));
      return row;
    },

    async setRequireMfa(id: string, requireMfa: boolean): Promise<void> {
      await db.update(customers).set({ requireMfa }).where(eq(customers.id, id));
    },

    async setFeeChangeApproval(id: string, policy: 'NONE' | 'REQUIRED'): Promise<void> {
      await db.update(customers).set({ feeChangeApproval: policy }).where(eq(customers.id, id));
    },
  };
}

export type UsersDal = ReturnType<typeof createUsersDal>;
