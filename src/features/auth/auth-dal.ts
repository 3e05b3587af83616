/** Queries of logins, sessions and tokens. Every function takes an optional transaction. */
import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/database.js';
import { authSessions, authTokens, users } from '../../db/schema.js';
import type { Principal } from './principal.js';

export interface NewToken {
  tokenHash: string;
  sessionId: string;
  kind: 'access' | 'refresh';
  expiresAt: Date;
}

const principalColumns = {
  userId: users.id,
  email: users.email,
  userType: users.type,
  customerId: users.customerId,
  merchantId: users.merchantId,
};

export function createAuthDal(db: Db) {
  return {
    async findUserByEmail(email: string, tx: DbOrTx = db) {
      const [row] = await tx
        .select({ id: users.id, type: users.type, passwordHash: users.passwordHash })
        .from(users)
        .where(eq(users.email, email))
        .limit(1);
      return row;
    },

    async createSession(userId: string, tx: DbOrTx = db): Promise<string> {
      const [row] = await tx.insert(authSessions).values({ userId }).returning({ id: authSessions.id });
      return row!.id;
    },

    async insertTokens(tokens: NewToken[], tx: DbOrTx = db): Promise<void> {
      await tx.insert(authTokens).values(tokens);
    },

    /** The caller behind a live access token, or undefined. One indexed lookup. */
    async findPrincipalByAccessToken(tokenHash: string, now: Date, tx: DbOrTx = db): Promise<Principal | undefined> {
      const [row] = await tx
        .select({ ...principalColumns, sessionId: authTokens.sessionId })
        .from(authTokens)
        .innerJoin(authSessions, eq(authSessions.id, authTokens.sessionId))
        .innerJoin(users, eq(users.id, authSessions.userId))
        .where(
          and(
            eq(authTokens.tokenHash, tokenHash),
            eq(authTokens.kind, 'access'),
            gt(authTokens.expiresAt, now),
            isNull(authSessions.revokedAt),
          ),
        )
        .limit(1);
      return row && { ...row, auth: 'token', apiKeyId: null };
    },

    /** Locks a refresh token for rotation, so two presentations of it cannot both win. */
    async lockRefreshToken(tokenHash: string, tx: DbOrTx) {
      const [row] = await tx
        .select({
          sessionId: authTokens.sessionId,
          expiresAt: authTokens.expiresAt,
          consumedAt: authTokens.consumedAt,
          revokedAt: authSessions.revokedAt,
          userId: authSessions.userId,
        })
        .from(authTokens)
        .innerJoin(authSessions, eq(authSessions.id, authTokens.sessionId))
        .where(and(eq(authTokens.tokenHash, tokenHash), eq(authTokens.kind, 'refresh')))
        .for('update', { of: authTokens })
        .limit(1);
      return row;
    },

    async consumeToken(tokenHash: string, now: Date, tx: DbOrTx): Promise<void> {
      await tx.update(authTokens).set({ consumedAt: now }).where(eq(authTokens.tokenHash, tokenHash));
    },

    /** Tokens past their expiry are useless: one statement removes them all. */
    async deleteExpiredTokens(before: Date, tx: DbOrTx = db): Promise<number> {
      const rows = await tx.delete(authTokens).where(lt(authTokens.expiresAt, before)).returning({ hash: authTokens.tokenHash });
      return rows.length;
    },

    async revokeSession(sessionId: string, reason: string, tx: DbOrTx = db): Promise<void> {
      await tx
        .update(authSessions)
        .set({ revokedAt: sql`now()`, revokedReason: reason })
        .where(and(eq(authSessions.id, sessionId), isNull(authSessions.revokedAt)));
    },
  };
}

export type AuthDal = ReturnType<typeof createAuthDal>;
