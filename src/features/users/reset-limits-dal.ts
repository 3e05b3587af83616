/**
 * A user's reset-code guesses and reset mails within a sliding hour, in
 * PostgreSQL so that every instance counts against the same budget. Each take
 * is one statement on the user's row: two at once wait for each other, so the
 * budget is never overspent, and the row stays locked to the end of the
 * transaction (a guess found right is given back in it).
 */
import { eq, sql } from 'drizzle-orm';
import { type Db, queryRows } from '../../db/database.js';
import { passwordResetLimits } from '../../db/schema.js';

type Kind = 'wrong_codes' | 'mails';

export function createResetLimitsDal(db: Db) {
  /** Records one more of `kind` now when fewer than `max` happened in the last hour; answers whether it did. */
  async function take(userId: string, kind: Kind, max: number): Promise<boolean> {
    const column = sql.identifier(kind);
    const recent = sql`ARRAY(SELECT t FROM unnest(l.${column}) AS t WHERE t > now() - interval '1 hour' ORDER BY t)`;
    const rows = await queryRows<{ taken: boolean }>(
      db,
      sql`INSERT INTO ${passwordResetLimits} AS l (user_id, ${column}) VALUES (${userId}, ARRAY[now()])
          ON CONFLICT (user_id) DO UPDATE SET ${column} =
            CASE WHEN cardinality(${recent}) >= ${max} THEN l.${column} ELSE ${recent} || now() END
          RETURNING ${column}[cardinality(${column})] = now() AS taken`,
    );
    return rows[0]?.taken === true;
  }

  return {
    /** Spends one of the user's wrong-code guesses of the hour, before the code is compared. */
    takeGuess: (userId: string, max: number) => take(userId, 'wrong_codes', max),

    /** The guess just taken (in this transaction) was right: it is given back. */
    async returnGuess(userId: string): Promise<void> {
      await db
        .update(passwordResetLimits)
        .set({
          wrongCodes: sql`${passwordResetLimits.wrongCodes}[1:cardinality(${passwordResetLimits.wrongCodes}) - 1]`,
        })
        .where(eq(passwordResetLimits.userId, userId));
    },

    /** Spends one of the user's reset mails of the hour. */
    takeMail: (userId: string, max: number) => take(userId, 'mails', max),
  };
}

export type ResetLimitsDal = ReturnType<typeof createResetLimitsDal>;
