/** `feegate users …`: login users created, listed, reset, unlocked and logged out by the operator. */
import { Type } from '@sinclair/typebox';
import { type CommandTable, options, usageLine, validate, withDatabase } from './cli-kit.js';
import { UsageError } from './errors.js';
import { OPERATOR_CONTEXT } from './lib/change-context.js';
import { Email, Uuid } from './schemas/common.js';

const UserEmail = Type.Object({ email: Email });

/** The --email of a `users` command, checked as the API checks an e-mail. */
function emailOption(name: string, args: string[]): string {
  const { values } = options(USERS_COMMANDS, name, args, { email: { type: 'string' } });
  if (!values.email) throw new UsageError(`--email is required; ${usageLine(USERS_COMMANDS, name)}`);
  validate(UserEmail, { email: values.email }, { email: '--email' });
  return values.email;
}

async function usersUnlockCommand(args: string[]): Promise<number> {
  const email = emailOption('users unlock', args);
  await withDatabase(({ services }) => services.auth.unlock(email));
  console.log(`failed-login counts of ${email} cleared, on every running instance`);
  return 0;
}

async function usersLogoutCommand(args: string[]): Promise<number> {
  const email = emailOption('users logout', args);
  const ended = await withDatabase(({ services }) => services.auth.logoutUser(email, OPERATOR_CONTEXT));
  console.log(`${ended} login(s) of ${email} ended, on every running instance`);
  return 0;
}

const NewLoginUser = Type.Object({
  customer_id: Uuid,
  email: Email,
  role: Type.Optional(Type.Union([Type.Literal('ADMIN'), Type.Literal('MEMBER'), Type.Literal('VIEWER')])),
});
async function usersCreateCommand(args: string[]): Promise<number> {
  const { values } = options(USERS_COMMANDS, 'users create', args, {
    customer: { type: 'string' },
    email: { type: 'string' },
    role: { type: 'string' },
  });
  if (!values.customer || !values.email)
    throw new UsageError(`--customer and --email are required; ${usageLine(USERS_COMMANDS, 'users create')}`);
  const input = { customer_id: values.customer, email: values.email, ...(values.role ? { role: values.role } : {}) };
  validate(NewLoginUser, input, { customer_id: '--customer', email: '--email', role: '--role' });
  const role = values.role as 'ADMIN' | 'MEMBER' | 'VIEWER' | undefined;
  const created = await withDatabase(({ services }) =>
    services.users.createByOperator(input.customer_id.toLowerCase(), input.email, role),
  );
  console.log(
    `login user ${created.attributes.id} ${created.attributes.email} (${created.attributes.role}); temporary password, shown once:`,
  );
  console.log(created.temporary_password);
  return 0;
}
async function usersResetPasswordCommand(args: string[]): Promise<number> {
  const email = emailOption('users reset-password', args);
  const { temporary_password } = await withDatabase(({ services }) => services.users.resetByOperator(email));
  console.log(`every login of ${email} ended; temporary password, shown once:`);
  console.log(temporary_password);
  return 0;
}
const CustomerOption = Type.Object({ customer_id: Uuid });
async function usersListCommand(args: string[]): Promise<number> {
  const { values } = options(USERS_COMMANDS, 'users list', args, { customer: { type: 'string' } });
  if (!values.customer) throw new UsageError(`--customer is required; ${usageLine(USERS_COMMANDS, 'users list')}`);
  validate(CustomerOption, { customer_id: values.customer }, { customer_id: '--customer' });
  const records = await withDatabase(({ services }) => services.users.listByOperator(values.customer!.toLowerCase()));
  console.log(['id', 'email', 'scope', 'role', 'status', 'mfa'].join('\t'));
  for (const u of records)
    console.log(
      [u.attributes.id, u.attributes.email, u.attributes.scope, u.attributes.role ?? '-', u.status, u.mfa_enabled].join(
        '\t',
      ),
    );
  console.log(`${records.length} user(s)`);
  return 0;
}
export const USERS_COMMANDS: CommandTable = {
  'users create': {
    args: '--customer <uuid> --email <e-mail> [--role ADMIN|MEMBER|VIEWER]',
    summary: 'add a login user (MEMBER unless --role); prints its temporary password once',
    run: usersCreateCommand,
  },
  'users reset-password': {
    args: '--email <e-mail>',
    summary: 'give a login user a temporary password (printed once), ending its logins and two-factor codes',
    run: usersResetPasswordCommand,
  },
  'users list': {
    args: '--customer <uuid>',
    summary: "list a customer's users: login and integration users, roles and status",
    run: usersListCommand,
  },
  'users unlock': {
    args: '--email <e-mail>',
    summary: "clear a user name's failed-login counts (its 429 too_many_login_attempts)",
    run: usersUnlockCommand,
  },
  'users logout': {
    args: '--email <e-mail>',
    summary: 'end every login of a login user, on every instance',
    run: usersLogoutCommand,
  },
};
