/** Queries of logins, sessions and refresh tokens. Every function takes an optional transaction. */
import { and, eq, gt, inArray, isNotNull, isNull, lt, ne, type Placeholder, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import {
  type AuthMethod,
  auditEvents,
  authSessions,
  authTokens,
  customers,
  loginChallenges,
  users,
} from '../../db/schema.js';
import type { SealedValues } from '../../lib/sealed-values.js';
import { type CredentialsDal, totpCell } from '../credentials/credentials-dal.js';

/** The DALs a change of logins writes through: its own, and the user's stored credentials (bound as `users`, whose DAL holds them). */
export interface AuthDals {
  auth: AuthDal;
  users: CredentialsDal;
}

export type ChallengeName = 'NEW_PASSWORD_REQUIRED' | 'SOFTWARE_TOKEN_MFA' | 'MFA_SETUP';

export interface NewToken {
  tokenHash: string;
  sessionId: string;
  /** Only refresh tokens are stored: access tokens are JWTs checked in memory. */
  kind: 'refresh';
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
  findLoginUser: (on: Db, name = '') =>
    on
      .select({
        id: users.id,
        type: users.type,
        customerId: users.customerId,
        passwordHash: users.passwordHash,
        role: users.role,
        enabled: users.enabled,
        mustChangePassword: users.mustChangePassword,
        totpEnabled: users.totpEnabled,
        requireMfa: customers.requireMfa,
      })
      .from(users)
      .innerJoin(customers, eq(customers.id, users.customerId))
      .where(and(eq(users.email, sql.placeholder('email')), isNotNull(users.passwordHash)))
      .limit(1)
      .prepare(name),
  // The session, its refresh token and its audit record as data-modifying CTEs:
  // one round trip instead of five with BEGIN and COMMIT; the foreign keys are
  // checked at the end of the statement.
  openSession: (on: Db, name = '') => {
    const newSession = on
      .$with('new_session')
      .as(on.insert(authSessions).values({ id: sql.placeholder('sessionId'), ...placeholders('userId', 'amr') }));
    const newToken = on
      .$with('new_token')
      .as(on.insert(authTokens).values(placeholders('tokenHash', 'sessionId', 'kind', 'expiresAt')));
    const audit = placeholders(
      'requestId',
      'actorType',
      'actorId',
      'customerId',
      'action',
      'targetType',
      'targetId',
      'details',
    );
    return on.with(newSession, newToken).insert(auditEvents).values(audit).prepare(name);
  },
};

export function createAuthDal(db: Db, sealed: SealedValues) {
  // Each built on first use: a unit of work binds this DAL to each transaction, and most never log in;
  // and the reads on the pool never prepare the write.
  const prepared: {
    findLoginUser?: ReturnType<typeof loginStatements.findLoginUser>;
    openSession?: ReturnType<typeof loginStatements.openSession>;
  } = {};

  return {
    /** The login user of an e-mail (unique on the platform); integration users of the same e-mail cannot log in. */
    async findLoginUser(email: string) {
      prepared.findLoginUser ??= loginStatements.findLoginUser(db, 'auth_find_login_user');
      const [row] = await prepared.findLoginUser.execute({ email });
      return row;
    },

    /**
     * A new login in one statement: the session of `refreshToken.sessionId` for
     * the user, established by `amr`, its refresh token and its audit record.
     */
    async openSession(userId: string, amr: AuthMethod[], refreshToken: NewToken, audit: NewAuditEvent): Promise<void> {
      prepared.openSession ??= loginStatements.openSession(db, 'auth_open_session');
      await prepared.openSession.execute({ ...audit, ...refreshToken, userId, amr });
    },

    /** A new login's session alone, in a unit of work that writes its token and audit record beside it. */
    async insertSession(sessionId: string, userId: string, amr: AuthMethod[]): Promise<void> {
      await db.insert(authSessions).values({ id: sessionId, userId, amr });
    },

    async insertTokens(tokens: NewToken[]): Promise<void> {
      await db.insert(authTokens).values(tokens);
    },

    /** What /v1/users/me shows of a token caller that the token does not carry. */
    async findUserEmail(userId: string): Promise<string | undefined> {
      const [row] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
      return row?.email;
    },

    /** Logins revoked after `since`: tokens of theirs may still be alive. */
    async listRevokedSessionIds(since: Date): Promise<string[]> {
      const rows = await db
        .select({ id: authSessions.id })
        .from(authSessions)
        .where(and(isNotNull(authSessions.revokedAt), gt(authSessions.revokedAt, since)));
      return rows.map((r) => r.id);
    },

    async isSessionRevoked(sessionId: string): Promise<boolean> {
      const [row] = await db
        .select({ revokedAt: authSessions.revokedAt })
        .from(authSessions)
        .where(eq(authSessions.id, sessionId))
        .limit(1);
      return !row || row.revokedAt !== null;
    },

    /** Locks a refresh token for rotation, so two presentations of it cannot both win. */
    async lockRefreshToken(tokenHash: string) {
      const [row] = await db
        .select({
          sessionId: authTokens.sessionId,
          sessionCreatedAt: authSessions.createdAt,
          expiresAt: authTokens.expiresAt,
          consumedAt: authTokens.consumedAt,
          revokedAt: authSessions.revokedAt,
          amr: authSessions.amr,
          userId: authSessions.userId,
          userType: users.type,
          customerId: users.customerId,
          email: users.email,
          role: users.role,
          requireMfa: customers.requireMfa,
        })
        .from(authTokens)
        .innerJoin(authSessions, eq(authSessions.id, authTokens.sessionId))
        .innerJoin(users, eq(users.id, authSessions.userId))
        .innerJoin(customers, eq(customers.id, users.customerId))
        .where(and(eq(authTokens.tokenHash, tokenHash), eq(authTokens.kind, 'refresh')))
        .for('update', { of: authTokens })
        .limit(1);
      return row;
    },

    async consumeToken(tokenHash: string, now: Date): Promise<void> {
      await db.update(authTokens).set({ consumedAt: now }).where(eq(authTokens.tokenHash, tokenHash));
    },

    /** Tokens past their expiry are useless: one statement removes them all. */
    async deleteExpiredTokens(before: Date): Promise<number> {
      const rows = await db
        .delete(authTokens)
        .where(lt(authTokens.expiresAt, before))
        .returning({ hash: authTokens.tokenHash });
      return rows.length;
    },

    /**
     * Revokes every live login of a user (logout everywhere, a change of role,
     * password or state), but `keep`; answers their ids for the unit of work's notice.
     */
    async revokeUserSessions(userId: string, reason: string, keep?: string): Promise<string[]> {
      const rows = await db
        .update(authSessions)
        .set({ revokedAt: sql`now()`, revokedReason: reason })
        .where(
          and(
            eq(authSessions.userId, userId),
            isNull(authSessions.revokedAt),
            keep === undefined ? undefined : ne(authSessions.id, keep),
          ),
        )
        .returning({ id: authSessions.id });
      return rows.map((r) => r.id);
    },

    /** Revokes every live login of a customer's users made without a one-time code; answers their ids. */
    async revokeSessionsWithoutOtp(customerId: string, reason: string): Promise<string[]> {
      const rows = await db
        .update(authSessions)
        .set({ revokedAt: sql`now()`, revokedReason: reason })
        .where(
          and(
            inArray(
              authSessions.userId,
              db.select({ id: users.id }).from(users).where(eq(users.customerId, customerId)),
            ),
            isNull(authSessions.revokedAt),
            sql`NOT ('otp' = ANY(${authSessions.amr}))`,
          ),
        )
        .returning({ id: authSessions.id });
      return rows.map((r) => r.id);
    },

    /** The customers whose logins need a one-time code (require_mfa). */
    async listCustomersRequiringMfa(): Promise<string[]> {
      const rows = await db.select({ id: customers.id }).from(customers).where(eq(customers.requireMfa, true));
      return rows.map((r) => r.id);
    },

    async customerRequiresMfa(customerId: string): Promise<boolean> {
      const [row] = await db
        .select({ requireMfa: customers.requireMfa })
        .from(customers)
        .where(eq(customers.id, customerId))
        .limit(1);
      return row?.requireMfa === true;
    },

    /** A challenge instead of a token: its session is stored as a SHA-256 only. */
    async insertChallenge(challenge: { sessionHash: string; userId: string; name: ChallengeName; expiresAt: Date }) {
      await db.insert(loginChallenges).values(challenge);
    },

    /** A challenge session still to be answered, and its user; `lock`ed, two answers at once cannot both win. */
    async findChallenge(sessionHash: string, now: Date, lock: boolean) {
      const query = db
        .select({
          name: loginChallenges.name,
          userId: users.id,
          email: users.email,
          type: users.type,
          customerId: users.customerId,
          role: users.role,
          enabled: users.enabled,
          totpSecret: users.totpSecret,
          totpEnabled: users.totpEnabled,
          requireMfa: customers.requireMfa,
        })
        .from(loginChallenges)
        .innerJoin(users, eq(users.id, loginChallenges.userId))
        .innerJoin(customers, eq(customers.id, users.customerId))
        .where(
          and(
            eq(loginChallenges.sessionHash, sessionHash),
            isNull(loginChallenges.usedAt),
            gt(loginChallenges.expiresAt, now),
          ),
        )
        .limit(1);
      const [row] = await (lock ? query.for('update', { of: loginChallenges }) : query);
      return row && { ...row, totpSecret: sealed.open(totpCell(row.userId), row.totpSecret) };
    },

    /** Every pending challenge session of a user ends (an ADMIN's reset, a disable or a re-enable). */
    async voidChallenges(userId: string): Promise<void> {
      await db
        .update(loginChallenges)
        .set({ usedAt: sql`now()` })
        .where(and(eq(loginChallenges.userId, userId), isNull(loginChallenges.usedAt)));
    },

    /** A challenge session is good once, whatever its answer. */
    async spendChallenge(sessionHash: string): Promise<void> {
      await db.update(loginChallenges).set({ usedAt: sql`now()` }).where(eq(loginChallenges.sessionHash, sessionHash));
    },

    /** Revokes a login (its unit of work tells every instance). */
    async revokeSession(sessionId: string, reason: string): Promise<void> {
      await db
        .update(authSessions)
        .set({ revokedAt: sql`now()`, revokedReason: reason })
        .where(and(eq(authSessions.id, sessionId), isNull(authSessions.revokedAt)));
    },
  };
}

export type AuthDal = ReturnType<typeof createAuthDal>;
