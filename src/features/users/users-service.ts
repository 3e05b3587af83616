/**
 * Back-office users (docs/api.md, "Users and roles"): an ADMIN lists, adds,
 * changes and resets the users of its customer; every login user changes its
 * own password and two-factor codes; anybody may ask for a forgotten password.
 */
import { randomBytes } from 'node:crypto';
import type { UnitOfWork, WriteScope } from '../../db/unit-of-work.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { type ChangeContext, OPERATOR_CONTEXT } from '../../lib/change-context.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import type { Principal, Role, UserType } from '../../lib/principal.js';
import type { ApiKeysDal } from '../api-keys/api-keys-dal.js';
import { keyChangeNotice, type KeyCaches } from '../api-keys/key-change-feed.js';
import { revokeKeysCreatedByIn } from '../api-keys/key-revocation.js';
import { normaliseEmail } from '../../lib/email.js';
import type { AuthDals } from '../auth/auth-dal.js';
import type { AuthService } from '../auth/auth-service.js';
import type { PasswordHasher } from '../credentials/password-hasher.js';
import type { MailDal } from '../mail/mail-dal.js';
import { passwordResetMail, temporaryPasswordMail } from '../mail/mail-messages.js';
import { assertLogin, createCurrentPasswordCheck } from './current-password.js';
import { createOwnTotp } from './own-totp.js';
import { assertStrongPassword } from '../credentials/password-policy.js';
import { createPasswordResets } from './password-resets.js';
import { readCreateUser } from './platform-user-request.js';
import type { ResetLimitsDal } from './reset-limits-dal.js';
import { auditUser } from './user-audit.js';
import type { UserChanges, UserRow, UsersDal } from './users-dal.js';
import type { UpdateCustomerRequest } from './customer-settings-schemas.js';
import type { CreateUserRequest } from './users-schemas.js';

export interface UsersDals extends AuthDals {
  users: UsersDal;
  mail: MailDal;
  resetLimits: ResetLimitsDal;
  apiKeys: ApiKeysDal;
}

export interface UsersServiceDeps {
  uow: UnitOfWork<UsersDals>;
  usersDal: Pick<UsersDal, 'list' | 'customer' | 'findLoginUser' | 'passwordHash' | 'totp'>;
  auth: AuthService;
  hasher: PasswordHasher;
  keyCaches: KeyCaches;
  /** Mail goes out only with SMTP_URL set; otherwise nothing is written to the outbox. */
  mailEnabled: boolean;
  /** Wakes the mail sender of this instance once a message is committed. */
  mailQueued(): void;
  totpIssuer: string;
  now?: () => Date;
  onBackgroundError?(err: unknown, what: string): void;
}

export type UserStatus = 'CONFIRMED' | 'FORCE_CHANGE_PASSWORD' | 'DISABLED';

/** A user as GET /v1/users answers it, in the platform's shape; never a password, code or secret. */
export function userRecord(row: UserRow) {
  const status: UserStatus = !row.enabled ? 'DISABLED' : row.mustChangePassword ? 'FORCE_CHANGE_PASSWORD' : 'CONFIRMED';
  return {
    attributes: {
      id: row.id,
      name: row.name,
      description: row.description,
      email: row.email,
      customer_id: [row.customerId],
      merchant_id: row.merchantId ? [row.merchantId] : [],
      country: null,
      type: row.type,
      scope: row.login ? ('LOGIN' as const) : ('API_KEY' as const),
      role: row.role,
    },
    status,
    enabled: row.enabled,
    mfa_enabled: row.totpEnabled,
    audit: { creation_date: row.createdAt.toISOString(), update_date: row.updatedAt.toISOString() },
  };
}
export type UserRecord = ReturnType<typeof userRecord>;

/** A temporary password: 120 random bits, readable, shown once. */
const temporaryPassword = () => randomBytes(15).toString('base64url');

const userNotFound = () => new NotFoundError('user_not_found');
const insufficientRole = (detail: string) => new ForbiddenError('insufficient_role', detail);

/** Only an ADMIN's access token manages users; an API key never does. */
function assertAdmin(caller: Principal): void {
  if (caller.auth !== 'token' || caller.role !== 'ADMIN')
    throw insufficientRole('Only the access token of an ADMIN manages users; API keys never do.');
}

export function createUsersService(deps: UsersServiceDeps) {
  const { uow, usersDal, auth, hasher } = deps;
  const now = deps.now ?? (() => new Date());
  const assertCurrentPassword = createCurrentPasswordCheck(deps);
  const ownTotp = createOwnTotp({ ...deps, assertCurrentPassword, now });

  /** The customer's settings as GET and PATCH /v1/customers/me answer them. */
  async function customerSettings(customerId: string, dal: Pick<UsersDal, 'customer'> = usersDal) {
    const row = (await dal.customer(customerId))!;
    return {
      id: row.id,
      name: row.name,
      require_mfa: row.requireMfa,
      approval_policy: { fee_changes: row.feeChangeApproval },
    };
  }

  async function found(customerId: string, id: string, dal: Pick<UsersDal, 'lock'>): Promise<UserRow> {
    const row = await dal.lock(customerId, id);
    if (!row) throw userNotFound();
    return row;
  }

  /** Writes the mail in the same transaction as its cause; the sender takes it from there. */
  async function queueMail(scope: WriteScope<UsersDals>, mail: { recipient: string; subject: string; body: string }) {
    if (!deps.mailEnabled) return;
    await scope.dal.mail.enqueue(mail);
    scope.afterCommit(deps.mailQueued);
  }

  const resets = createPasswordResets({ ...deps, now, queueMail });

  /** An ADMIN's reset, a disable and a re-enable end the user's pending challenges and reset code. */
  async function voidPendingCredentials(scope: WriteScope<UsersDals>, userId: string) {
    await scope.dal.auth.voidChallenges(userId);
    await scope.dal.users.deleteResetCode(userId);
  }

  /** A temporary password for `row`: FORCE_CHANGE_PASSWORD, sessions, challenges and two-factor codes ended, mailed. */
  async function resetTo(scope: WriteScope<UsersDals>, row: UserRow, hash: string, password: string) {
    await scope.dal.users.setPassword(row.id, hash, true);
    await scope.dal.users.setTotpEnabled(row.id, false);
    await voidPendingCredentials(scope, row.id);
    await auth.revokeSessionsIn(scope, row.id, 'password_reset');
    await scope.audit(auditUser('user.password_reset', row));
    await scope.emit({
      type: 'USER_UPDATED',
      customerId: row.customerId,
      data: userRecord((await scope.dal.users.find(row.customerId, row.id))!),
    });
    await queueMail(scope, passwordResetMail(row.email, password));
  }

  async function create(
    customerId: string,
    input: { email: string; name?: string | undefined; description?: string | undefined; role?: Role | undefined },
    context: ChangeContext,
  ) {
    const password = temporaryPassword();
    const hash = await hasher.hash(password);
    const email = normaliseEmail(input.email);
    const record = await uow.write(context, async (scope) => {
      const id = await scope.dal.users.insertLoginUser({
        email,
        customerId,
        name: input.name ?? null,
        description: input.description ?? null,
        role: input.role ?? 'MEMBER',
        passwordHash: hash,
      });
      if (!id) throw new ConflictError('user_conflict', 'A login user already has this e-mail.');
      const row = (await scope.dal.users.find(customerId, id))!;
      await scope.audit(auditUser('user.created', row, { email, role: row.role }));
      await scope.emit({ type: 'USER_CREATED', customerId, data: userRecord(row) });
      await queueMail(scope, temporaryPasswordMail(email, password));
      scope.answer({ ...userRecord(row), temporary_password: password });
      return userRecord(row);
    });
    return { ...record, temporary_password: password };
  }

  /**
   * A new temporary password. An ADMIN who resets a user with two-factor codes
   * turns them off, so with a mail server the password goes only to the user's
   * mailbox: else whoever holds an ADMIN's token would hold that user's login
   * without its second factor. The operator (`feegate users reset-password`)
   * always gets it: it holds the database already.
   */
  async function resetPassword(customerId: string, id: string, context: ChangeContext, byOperator = false) {
    const password = temporaryPassword();
    const hash = await hasher.hash(password);
    return uow.write(context, async (scope) => {
      const row = await found(customerId, id, scope.dal.users);
      if (!row.login) throw userNotFound();
      await resetTo(scope, row, hash, password);
      return row.totpEnabled && deps.mailEnabled && !byOperator
        ? { temporary_password: null, delivered_by: 'email' as const }
        : { temporary_password: password, delivered_by: 'response' as const };
    });
  }

  return {
    ...ownTotp,

    async list(
      caller: Principal,
      query: PageRequest & { email?: string | undefined; merchantId?: string | undefined; type?: UserType | undefined },
    ) {
      if (caller.merchantId !== null) throw new ForbiddenError('forbidden', 'Merchant keys cannot list users.');
      const { rows, total } = await usersDal.list(
        {
          customerId: caller.customerId,
          email: query.email === undefined ? undefined : normaliseEmail(query.email),
          merchantId: query.merchantId,
          type: query.type,
        },
        { limit: query.size, offset: offsetOf(query) },
      );
      return {
        users: rows.map(userRecord),
        metadata: {
          size: query.size,
          total_elements: total,
          total_pages: Math.ceil(total / query.size),
          number: query.page,
        },
      };
    },

    /** POST /v1/users, in feegate's shape or the platform's CreateUserRequest. */
    async create(caller: Principal, body: CreateUserRequest, context: ChangeContext) {
      assertAdmin(caller);
      return create(caller.customerId, readCreateUser(caller, body), context);
    },

    /** PATCH /v1/users/{id}; `revoke_keys` also revokes the keys the user created (mostly sent with `enabled: false`). */
    async update(
      caller: Principal,
      id: string,
      input: UserChanges & { revoke_keys?: boolean },
      context: ChangeContext,
    ) {
      assertAdmin(caller);
      const { revoke_keys: revokeKeys = false, ...changes } = input;
      return uow.write(context, async (scope) => {
        const { dal, audit, emit, notify, afterCommit } = scope;
        const row = await found(caller.customerId, id, dal.users);
        if (changes.role !== undefined && !row.login)
          throw new ConflictError('user_conflict', 'An integration user holds API keys and has no role.');
        const demoted = changes.role !== undefined && changes.role !== 'ADMIN';
        if (row.role === 'ADMIN' && row.enabled && (demoted || changes.enabled === false)) {
          const admins = await dal.users.lockEnabledAdmins(caller.customerId);
          if (admins.length <= 1) throw new ConflictError('last_admin');
        }
        await dal.users.update(row.id, changes);
        const after = (await dal.users.find(caller.customerId, row.id))!;
        const roleChanged = after.role !== row.role;
        const disabled = row.enabled && !after.enabled;
        if (row.login && (roleChanged || disabled))
          await auth.revokeSessionsIn(scope, row.id, roleChanged ? 'role_changed' : 'disabled');
        if (row.login && row.enabled !== after.enabled) await voidPendingCredentials(scope, row.id);
        const revokedKeys = revokeKeys ? await revokeKeysCreatedByIn(scope, row, deps.keyCaches) : 0;
        if (!row.login && row.enabled !== after.enabled) {
          // The user's keys are refused (or accepted again) at once on every instance.
          const hashes = await dal.users.keyHashes(row.id);
          for (const hash of hashes) await notify(keyChangeNotice(row.customerId, hash));
          afterCommit(() => {
            for (const h of hashes) deps.keyCaches.changed(row.customerId, h);
          });
        }
        const changed = {
          ...Object.fromEntries(Object.entries(changes).filter(([key]) => key !== 'enabled')),
          ...(revokeKeys ? { revoked_keys: revokedKeys } : {}),
        };
        if (Object.keys(changed).length > 0) await audit(auditUser('user.updated', row, changed));
        if (row.enabled !== after.enabled)
          await audit(auditUser(after.enabled ? 'user.enabled' : 'user.disabled', row));
        const record = userRecord(after);
        await emit({ type: 'USER_UPDATED', customerId: row.customerId, data: record });
        return record;
      });
    },

    async resetPassword(caller: Principal, id: string, context: ChangeContext) {
      assertAdmin(caller);
      return resetPassword(caller.customerId, id, context);
    },

    /** POST /v1/users/me/password: the current password is checked like a login (and counted like one). */
    async changeOwnPassword(
      caller: Principal,
      input: { current_password: string; new_password: string },
      context: ChangeContext,
      address: string,
    ): Promise<void> {
      assertLogin(caller);
      await assertCurrentPassword(caller, input.current_password, context, address);
      await assertStrongPassword(input.new_password, caller.email);
      const hash = await hasher.hash(input.new_password);
      await uow.write(context, async (scope) => {
        await scope.dal.users.setPassword(caller.userId, hash, false);
        // Every other login of the user ends; this one goes on.
        await auth.revokeSessionsIn(scope, caller.userId, 'password_changed', caller.sessionId ?? undefined);
        await scope.audit(auditUser('user.password_changed', { id: caller.userId, customerId: caller.customerId }));
      });
    },

    forgotPassword: resets.forgotPassword,
    confirmForgotPassword: resets.confirmForgotPassword,

    customer: (caller: Principal) => customerSettings(caller.customerId),

    /**
     * PATCH /v1/customers/me: require_mfa on ends the customer's logins made
     * without a one-time code, the caller's too; approval_policy decides whether
     * fee changes wait for a second ADMIN (the ones already held stay held).
     */
    async updateCustomer(caller: Principal, changes: UpdateCustomerRequest, context: ChangeContext) {
      assertAdmin(caller);
      return uow.write(context, async (scope) => {
        if (changes.require_mfa !== undefined) {
          await scope.dal.users.setRequireMfa(caller.customerId, changes.require_mfa);
          await auth.setRequireMfaIn(scope, caller.customerId, changes.require_mfa);
        }
        const feeChanges = changes.approval_policy?.fee_changes;
        if (feeChanges) await scope.dal.users.setFeeChangeApproval(caller.customerId, feeChanges);
        await scope.audit({
          action: 'customer.updated',
          customerId: caller.customerId,
          targetType: 'customer',
          targetId: caller.customerId,
          details: changes,
        });
        return customerSettings(caller.customerId, scope.dal.users);
      });
    },

    /** `feegate users create`: a login user of any customer, as an ADMIN would add it. */
    createByOperator(customerId: string, email: string, role: Role | undefined) {
      return create(customerId, { email, role }, OPERATOR_CONTEXT);
    },

    /** `feegate users reset-password`. */
    async resetByOperator(email: string) {
      const row = await usersDal.findLoginUser(normaliseEmail(email));
      if (!row) throw new NotFoundError('user_not_found', 'No login user has this e-mail.');
      return resetPassword(row.customerId, row.id, OPERATOR_CONTEXT, true);
    },

    /** `feegate users list`: every user of a customer, newest first. */
    async listByOperator(customerId: string) {
      const { rows } = await usersDal.list({ customerId }, { limit: 100_000, offset: 0 });
      return rows.map(userRecord);
    },

    stop: resets.stop,
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
