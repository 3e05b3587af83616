/** The mail outbox: messages written by the transaction that asks for them, claimed by the sender. */
import { randomUUID } from 'node:crypto';
import { asc, eq, lte, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { mailOutbox } from '../../db/schema.js';
import type { SealedValues } from '../../lib/sealed-values.js';

export interface Mail {
  recipient: string;
  subject: string;
  body: string;
}

/** Subject and body are stored encrypted: a waiting mail may hold a temporary password or a code. */
const cellOf = (id: string, column: 'subject' | 'body') => ({ table: 'mail_outbox', column, row: id });

export function createMailDal(db: Db, sealed: SealedValues) {
  return {
    async enqueue(mail: Mail): Promise<void> {
      // The id is made here: it is bound into the encryption before the row exists.
      const id = randomUUID();
      await db.insert(mailOutbox).values({
        id,
        recipient: mail.recipient,
        subject: sealed.seal(cellOf(id, 'subject'), mail.subject),
        body: sealed.seal(cellOf(id, 'body'), mail.body),
      });
    },

    /** The oldest due messages, locked for sending (another instance skips them); subject or body null when they do not open. */
    async claimDue(limit: number) {
      const rows = await db
        .select()
        .from(mailOutbox)
        .where(lte(mailOutbox.nextAttemptAt, sql`now()`))
        .orderBy(asc(mailOutbox.nextAttemptAt))
        .limit(limit)
        .for('update', { skipLocked: true });
      return rows.map((row) => ({
        ...row,
        subject: sealed.open(cellOf(row.id, 'subject'), row.subject),
        body: sealed.open(cellOf(row.id, 'body'), row.body),
      }));
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
