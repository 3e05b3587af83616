/**
 * Sends the mail outbox through SMTP (nodemailer): a background worker claims
 * due messages with FOR UPDATE SKIP LOCKED, so several instances never send one
 * twice, deletes each once the server took it, and postpones one it refused or
 * could not reach, with a pause growing to 10 minutes: a server that is down
 * delays the mail and loses none.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { createBackgroundWorker } from '../../lib/background-worker.js';
import type { Log } from '../../lib/log.js';
import type { MailDal } from './mail-dal.js';

const BATCH = 20;
const POLL_MS = 5000;
const MAX_DELAY_SECONDS = 600;

export interface MailSenderOptions {
  smtpUrl: string;
  from: string;
  uow: UnitOfWork<{ mail: MailDal }>;
  log: Log;
}

export function createMailSender({ smtpUrl, from, uow, log }: MailSenderOptions) {
  // Loaded when a sender is made: nodemailer holds about 15 MB, and without SMTP_URL none is (docs/performance.md, peak RSS).
  const transport = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl));
  const worker = createBackgroundWorker({
    name: 'mail',
    intervalMs: POLL_MS,
    log: log as unknown as Parameters<typeof createBackgroundWorker>[0]['log'],
    // One transaction per batch holds its rows' locks while sending: a crash mid-way sends them again (at least once).
    tick: () =>
      uow.write({ requestId: null, actor: { type: 'operator', id: null } }, async ({ dal: { mail } }) => {
        const due = await mail.claimDue(BATCH);
        for (const message of due) {
          // A mail that does not open (logged by the data layer) cannot be sent: it goes.
          if (message.subject === null || message.body === null) {
            await mail.remove(message.id);
            continue;
          }
          try {
            await (await transport).sendMail({
              from,
              to: message.recipient,
              subject: message.subject,
              text: message.body,
            });
            await mail.remove(message.id);
          } catch (err) {
            const delay = Math.min(MAX_DELAY_SECONDS, 2 ** message.attempts * 5);
            // The error only: never the message, which may hold a password or a code.
            log.warn(
              { err: { message: (err as Error).message }, mail: message.id, retryInSeconds: delay },
              'could not send a mail; it is retried',
            );
            await mail.postpone(message.id, delay);
          }
        }
        return due.length === BATCH;
      }),
  });
  return {
    start: () => worker.start(),
    wake: () => worker.wake(),
    async stop() {
      await worker.stop();
      (await transport).close();
    },
  };
}

export type MailSender = ReturnType<typeof createMailSender>;
