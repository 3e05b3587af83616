/**
 * Failed logins in the audit trail, recorded without the caller waiting for
 * them: awaiting the write would make a wrong password for a real user answer
 * later than one for an unknown user (nothing to record), and tell the two apart.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import type { ChangeContext } from '../../lib/change-context.js';
import type { AuthDals } from './auth-dal.js';

export interface FailedLoginsDeps {
  uow: UnitOfWork<AuthDals>;
  onBackgroundError?(err: unknown, what: string): void;
}

export function createFailedLogins(deps: FailedLoginsDeps) {
  const backgroundWrites = new Set<Promise<void>>();
  return {
    /** An `auth.login_failed` event of a known user's customer; `factor` names a wrong one-time code. */
    record(context: ChangeContext, user: { id: string; customerId: string }, address: string, factor?: 'totp'): void {
      const details = factor ? { client_address: address, factor } : { client_address: address };
      const write = deps.uow
        .write(context, ({ audit }) =>
          audit({
            action: 'auth.login_failed',
            customerId: user.customerId,
            targetType: 'user',
            targetId: user.id,
            details,
          }),
        )
        .catch((err) => deps.onBackgroundError?.(err, 'could not record a failed login in the audit trail'))
        .finally(() => backgroundWrites.delete(write));
      backgroundWrites.add(write);
    },

    /** Waits for what is still being written. */
    async settled(): Promise<void> {
      await Promise.all(backgroundWrites);
    },
  };
}

export type FailedLogins = ReturnType<typeof createFailedLogins>;
