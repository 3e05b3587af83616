/** Queries of logins, sessions and refresh tokens. Every function takes an optional transaction. */
import { and, eq, gt, isNotNull, isNull, lt, type Placeholder, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../db/database.js';
import { auditEvents, authSessions, authTokens, users } from '../../db/schema.js';
import { toUuidArray } from '../../lib/uuid-array.js';
import { loginUnlockedNotice, sessionRevokedNotice, sessionsRevokedNotice } from './auth-change-feed.js';

export interface NewToken {
  tokenHash: string;
  sessionId: string;
  kind: 'access' | 'refresh';
  expiresAt: Date;
}

type NewAuditEvent = typeof auditEvents.$inferInsert;
/** `{ name: sql.placeholder('name') }` for each name: the values of a prepared insert. */
const placeholders = <K extends string>(...names: K[]) =>
  Object.fromEntries(names.map((n) => [n, sql.placeholder(n)])) as unknown as Record<K, Placeholder<K>>;

/**
 * The two statements of every login, built once with placeholders and run as
 * prepared statements (named, so PostgreSQL parses and plans each once per
 * connection): building them anew was the longest stretch of event-loop work a
 * login storm put in front of cheap requests.
 */
const loginStatements = {
  findLoginUser: (on: DbOrTx, name = '') =>
    on
      .select({ id: users.id, type: users.type, customerId: users.customerId, passwordHash: users.passwordHash })
      .from(users)
      .where(and(eq(users.email, sql.placeholder('email')), isNotNull(users.passwordHash)))
      .limit(1)
      .prepare(name),
  // The session, its refresh token and its audit record as data-modifying CTEs:
  // one round trip instead of five with BEGIN and COMMIT; the foreign keys are
  // checked at the end of the statement.
  openSession: (on: DbOrTx, name = '') => {
    const newSession = on.$with('new_session').as(on.insert(authSessions).values({ id: sql.placeholder('sessionId'), userId: sql.placeholder('userId') }));
    const newToken = on.$with('new_token').as(on.insert(authTokens).values(placeholders('tokenHash', 'sessionId', 'kind', 'expiresAt')));
    const audit = placeholders('requestId', 'actorType', 'actorId', 'customerId', 'action', 'targetType', 'targetId', 'details');
    return on.with(newSession, newToken).insert(auditEvents).values(audit).prepare(name);
  },
};

export function createAuthDal(db: Db) {
  const findLoginUser = loginStatements.findLoginUser(db, 'auth_find_login_user');
  const openSession = loginStatements.openSession(db, 'auth_open_session');

  return {
    /** The login user of an e-mail (unique on the platform); integration users of the same e-mail cannot log in. */
    async findLoginUser(email: string, tx: DbOrTx = db) {
      const [row] = await (tx === db ? findLoginUser : loginStatements.findLoginUser(tx)).execute({ email });
      return row;
    },

    /** A new login in one statement: the session of `refreshToken.sessionId` for the user, its refresh token and its audit record. */
    async openSession(userId: string, refreshToken: NewToken, audit: NewAuditEvent, tx: DbOrTx = db): Promise<void> {
      await (tx === db ? openSession : loginStatements.openSession(tx)).execute({ ...audit, ...refreshToken, userId });
    },

    async insertTokens(tokens: NewToken[], tx: DbOrTx = db): Promise<void> {
      await tx.insert(authTokens).values(tokens);
    },

    /** What /v1/users/me shows of a token caller that the token does not carry. */
    async findUserEmail(userId: string, tx: DbOrTx = db): Promise<string | undefined> {
      const [row] = await tx.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
      return row?.email;
    },

    /** Logins revoked after `since`: tokens of theirs may still be alive. */
    async listRevokedSessionIds(since: Date, tx: DbOrTx = db): Promise<string[]> {
      const rows = await tx
        .select({ id: authSessions.id })
        .from(authSessions)
        .where(and(isNotNull(authSessions.revokedAt), gt(authSessions.revokedAt, since)));
      return rows.map((r) => r.id);
    },

    async isSessionRevoked(sessionId: string, tx: DbOrTx = db): Promise<boolean> {
      const [row] = await tx.select({ revokedAt: authSessions.revokedAt }).from(authSessions).where(eq(authSessions.id, sessionId)).limit(1);
      return !row || row.revokedAt !== null;
    },

    /** Locks a refresh token for rotation, so two presentations of it cannot both win. */
    async lockRefreshToken(tokenHash: string, tx: DbOrTx) {
      const [row] = await tx
        .select({
          sessionId: authTokens.sessionId,
          sessionCreatedAt: authSessions.createdAt,
          expiresAt: authTokens.expiresAt,
          consumedAt: authTokens.consumedAt,
          revokedAt: authSessions.revokedAt,
          userId: authSessions.userId,
          userType: users.type,
          customerId: users.customerId,
          email: users.email,
        })
        .from(authTokens)
        .innerJoin(authSessions, eq(authSessions.id, authTokens.sessionId))
        .innerJoin(users, eq(users.id, authSessions.userId))
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

    /** Revokes every live login of a user (logout everywhere); every instance is told on commit. Answers their ids. */
    async revokeUserSessions(userId: string, reason: string, tx: DbOrTx = db): Promise<string[]> {
      const rows = await tx
        .update(authSessions)
        .set({ revokedAt: sql`now()`, revokedReason: reason })
        .where(and(eq(authSessions.userId, userId), isNull(authSessions.revokedAt)))
        .returning({ id: authSessions.id });
      const ids = rows.map((r) => r.id);
      if (ids.length > 0) await tx.execute(sessionsRevokedNotice(toUuidArray(ids)));
      return ids;
    },

    /** Tells every running instance to forget its failed-login counts of a user name. */
    async announceUnlock(name: string, tx: DbOrTx = db): Promise<void> {
      await tx.execute(loginUnlockedNotice(name));
    },

    /** Revokes a login; every instance is told on commit. */
    async revokeSession(sessionId: string, reason: string, tx: DbOrTx = db): Promise<void> {
      await tx
        .update(authSessions)
        .set({ revokedAt: sql`now()`, revokedReason: reason })
        .where(and(eq(authSessions.id, sessionId), isNull(authSessions.revokedAt)));
      await tx.execute(sessionRevokedNotice(sessionId));
    },
  };
}

export type AuthDal = ReturnType<typeof createAuthDal>;
