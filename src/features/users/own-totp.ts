/**
 * A login user's own two-factor codes (TOTP, RFC 6238): enrolling and turning
 * them off take the current password first (current-password.ts); turning
 * them on or off ends every other login of the user, on every instance.
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadRequestError, ConflictError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import type { Principal } from '../../lib/principal.js';
import type { AuthDal } from '../auth/auth-dal.js';
import type { AuthService } from '../auth/auth-service.js';
import { newRecoveryCodes, newTotpSecret, otpauthUrl, recoveryCodeHash, totpStep } from '../credentials/totp.js';
import { assertLogin, type CurrentPasswordCheck } from './current-password.js';
import { auditUser } from './user-audit.js';
import type { UsersDal } from './users-dal.js';

export interface OwnTotpDeps {
  uow: UnitOfWork<{ users: UsersDal; auth: AuthDal }>;
  usersDal: Pick<UsersDal, 'totp'>;
  auth: Pick<AuthService, 'countAttempt' | 'countSuccess' | 'revokeSessionsIn'>;
  assertCurrentPassword: CurrentPasswordCheck;
  totpIssuer: string;
  now: () => Date;
}

const invalidCode = () => new BadRequestError('invalid_code');

export function createOwnTotp(deps: OwnTotpDeps) {
  const { uow, usersDal, auth, assertCurrentPassword, now } = deps;

  /** The user's TOTP code or one of its recovery codes, spent; false when neither. */
  async function spendCode(dal: UsersDal, userId: string, secret: string, code: string, recovery: boolean) {
    const step = totpStep(secret, code, now().getTime());
    if (step !== null && (await dal.acceptTotpStep(userId, step))) return true;
    return recovery && (await dal.useRecoveryCode(userId, recoveryCodeHash(code)));
  }

  return {
    /** POST /v1/users/me/mfa/totp: a new secret, not yet active; the current password first. */
    async startTotp(caller: Principal, password: string | undefined, context: ChangeContext, address: string) {
      assertLogin(caller);
      await assertCurrentPassword(caller, password, context, address);
      const current = await usersDal.totp(caller.userId);
      if (current?.enabled) throw new ConflictError('mfa_already_enabled');
      const secret = newTotpSecret();
      // The enrolment is what the change reports: an Idempotency-Key stores it with the pending secret.
      return uow.write(context, async ({ dal }) => {
        await dal.users.setPendingTotp(caller.userId, secret);
        return { secret, otpauth_url: otpauthUrl(secret, caller.email, deps.totpIssuer) };
      });
    },

    /**
     * POST /v1/users/me/mfa/totp/verify: the first code turns it on; the
     * recovery codes are shown once; every other login of the user ends.
     */
    async verifyTotp(caller: Principal, code: string, context: ChangeContext, address: string) {
      assertLogin(caller);
      await auth.countAttempt(caller.email, address);
      const recoveryCodes = newRecoveryCodes();
      const ok = await uow.write(context, async (scope) => {
        const current = await scope.dal.users.totp(caller.userId);
        if (!current?.secret || current.enabled) return false;
        if (!(await spendCode(scope.dal.users, caller.userId, current.secret, code, false))) return false;
        await scope.dal.users.setTotpEnabled(caller.userId, true);
        await scope.dal.users.replaceRecoveryCodes(caller.userId, recoveryCodes.map(recoveryCodeHash));
        await auth.revokeSessionsIn(scope, caller.userId, 'mfa_enabled', caller.sessionId ?? undefined);
        await scope.audit(auditUser('user.mfa_enabled', { id: caller.userId, customerId: caller.customerId }));
        scope.answer({ recovery_codes: recoveryCodes });
        return true;
      });
      if (!ok) throw invalidCode();
      await auth.countSuccess(caller.email, address);
      return { recovery_codes: recoveryCodes };
    },

    /**
     * DELETE /v1/users/me/mfa/totp: turned off with the current password and a
     * code (or a recovery code); every other login of the user ends.
     */
    async disableTotp(
      caller: Principal,
      input: { code: string; current_password?: string | undefined },
      context: ChangeContext,
      address: string,
    ): Promise<void> {
      assertLogin(caller);
      await assertCurrentPassword(caller, input.current_password, context, address);
      await auth.countAttempt(caller.email, address);
      const ok = await uow.write(context, async (scope) => {
        const current = await scope.dal.users.totp(caller.userId);
        if (!current?.secret || !current.enabled) return false;
        if (!(await spendCode(scope.dal.users, caller.userId, current.secret, input.code, true))) return false;
        await scope.dal.users.setTotpEnabled(caller.userId, false);
        await auth.revokeSessionsIn(scope, caller.userId, 'mfa_disabled', caller.sessionId ?? undefined);
        await scope.audit(auditUser('user.mfa_disabled', { id: caller.userId, customerId: caller.customerId }));
        return true;
      });
      if (!ok) throw invalidCode();
      await auth.countSuccess(caller.email, address);
    },
  };
}
