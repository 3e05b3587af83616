/** The mail outbox: messages written by the transaction that asks for them, claimed by the sender. */
import { asc, eq, lte, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { mailOutbox } from '../../db/schema.js';

export interface Mail {
  recipient: string;
  subject: string;
  body: string;
}

export function createMailDal(db: Db) {
  return {
    async enqueue(mail: Mail): Promise<void> {
      await db.insert(mailOutbox).values(mail);
    },

    /** The oldest due messages, locked for sending (another instance skips them). */
    async claimDue(limit: number) {
      return db
        .select()
        .from(mailOutbox)
        .where(lte(mailOutbox.nextAttemptAt, sql`now()`))
        .orderBy(asc(mailOutbox.nextAttemptAt))
        .limit(limit)
        .for('update', { skipLocked: true });
    },

    /** Sent: the row goes, with the temporary password or code it may hold. */
    async remove(id: string): Promise<void> {
      await db.delete(mailOutbox).where(eq(mailOutbox.id, id));
    },

    /** Not sent: tried again after `delaySeconds`. */
    async postpone(id: string, delaySeconds: number): Promise<void> {
      await db
        .update(mailOutbox)
        .set({
          attempts: sql`${mailOutbox.attempts} + 1`,
          nextAttemptAt: sql`now() + make_interval(secs => ${delaySeconds})`,
        })
        .where(eq(mailOutbox.id, id));
    },
  };
}

export type MailDal = ReturnType<typeof createMailDal>;
