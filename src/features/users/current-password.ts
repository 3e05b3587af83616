/**
 * The step-up of a change to the caller's own credentials (its password, its
 * two-factor codes): the current password, checked like a login and counted
 * like one, so a stolen access token alone cannot take the account over.
 */
import { ForbiddenError, UnauthorizedError } from '../../errors.js';
import type { ChangeContext } from '../../lib/change-context.js';
import type { Principal } from '../../lib/principal.js';
import type { AuthService } from '../auth/auth-service.js';
import type { PasswordHasher } from '../credentials/password-hasher.js';
import type { UsersDal } from './users-dal.js';

export interface CurrentPasswordDeps {
  auth: Pick<AuthService, 'countAttempt' | 'countSuccess' | 'recordFailure'>;
  hasher: Pick<PasswordHasher, 'verify'>;
  usersDal: Pick<UsersDal, 'passwordHash'>;
}

/** The caller's own login: a token, never a key. */
export function assertLogin(caller: Principal): void {
  if (caller.auth !== 'token')
    throw new ForbiddenError('forbidden', "This is a login user's own setting: use its access token.");
}

export type CurrentPasswordCheck = ReturnType<typeof createCurrentPasswordCheck>;

export function createCurrentPasswordCheck(deps: CurrentPasswordDeps) {
  /** 401 invalid_credentials when `password` is missing or wrong: a failed login of the caller, from `address`. */
  return async function assertCurrentPassword(
    caller: Principal,
    password: string | undefined,
    context: ChangeContext,
    address: string,
  ): Promise<void> {
    await deps.auth.countAttempt(caller.email, address);
    const ok =
      password !== undefined && (await deps.hasher.verify(() => deps.usersDal.passwordHash(caller.userId), password));
    if (!ok) {
      deps.auth.recordFailure(context, { id: caller.userId, customerId: caller.customerId }, address);
      throw new UnauthorizedError('invalid_credentials', 'The current password is not correct.');
    }
    await deps.auth.countSuccess(caller.email, address);
  };
}
