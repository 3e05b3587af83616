/**
 * The operator's command line: `feegate <command>` (npm run feegate -- <command>).
 * Each command is one entry of COMMANDS with its own small function; help is
 * made from the table. Errors print one line (cli-errors.ts) and exit 1.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { type TSchema, Type } from '@sinclair/typebox';
import { describeError } from './cli-errors.js';
import { secretsCommands } from './cli-secrets.js';
import { loadConfig, SETTINGS } from './config.js';
import { findInPackage } from './db/database.js';
import { ImportError, UsageError } from './errors.js';
import { CreateApiKeyBody } from './features/api-keys/api-keys-schemas.js';
import { OPERATOR_CONTEXT } from './lib/change-context.js';
import { createStrictAjv } from './plugins/validation.js';
import { Email, Uuid } from './schemas/common.js';
import { withKeyRing } from './key-ring-file.js';
import { loadDemoData, openConfiguredDatabase, serve } from './server.js';
import { createServices } from './services.js';

/** Exit status, or SERVING when the command keeps the process running. */
const SERVING = -1;

interface Command {
  /** Arguments after the command's name, as shown in help. */
  args?: string;
  summary: string;
  run(args: string[]): Promise<number>;
}

async function withDatabase<T>(
  work: (ctx: {
    config: ReturnType<typeof loadConfig>;
    services: ReturnType<typeof createServices>;
    database: Awaited<ReturnType<typeof openConfiguredDatabase>>;
  }) => Promise<T>,
  prepare = true,
): Promise<T> {
  const { config } = withKeyRing({ ...loadConfig(), logLevel: 'warn' });
  const database = await openConfiguredDatabase(config);
  const services = createServices(config, database);
  try {
    // `secrets check` reports keys the ring lacks rather than refusing to look.
    if (prepare) await services.secrets.prepare();
    return await work({ config, services, database });
  } finally {
    await services.stop();
    await database.close();
  }
}

/** parseArgs with its errors (unknown option, missing value) as one usage line. */
function options<T extends NonNullable<ParseArgsConfig['options']>>(
  name: string,
  args: string[],
  spec: T,
  positionals = 0,
) {
  const usage = `usage: feegate ${name}${COMMANDS[name]?.args ? ` ${COMMANDS[name].args}` : ''}`;
  try {
    const parsed = parseArgs({ args, options: spec, allowPositionals: positionals > 0, strict: true });
    if (parsed.positionals.length > positionals)
      throw new Error(`unexpected argument "${parsed.positionals[positionals]}"`);
    return parsed;
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('. ')[0]?.replace(/\.$/, '')}; ${usage}`);
  }
}

const ajv = createStrictAjv();
const FORMAT_NAMES: Record<string, string> = { email: 'an e-mail address', uuid: 'a UUID' };

/** Checks input with the API's own schema, naming the option a bad field came from. */
function validate(schema: TSchema, value: Record<string, unknown>, flags: Record<string, string>): void {
  const check = ajv.compile(schema);
  if (check(value)) return;
  const error = check.errors?.[0];
  const field = error?.instancePath.split('/')[1] ?? '';
  // Uuid is a format and a pattern: either failing means "not a UUID".
  const declared = (schema as { properties?: Record<string, { format?: string }> }).properties?.[field]?.format;
  const format =
    error && ['format', 'pattern'].includes(error.keyword) && declared ? FORMAT_NAMES[declared] : undefined;
  throw new UsageError(
    `${flags[field] ?? field} ${JSON.stringify(value[field])} is ${format ? `not ${format}` : `not valid (${error?.message ?? 'refused'})`}`,
  );
}

async function serveCommand(args: string[]): Promise<number> {
  options('serve', args, {});
  await serve(loadConfig());
  return SERVING;
}

async function migrateCommand(args: string[]): Promise<number> {
  options('migrate', args, {});
  await withDatabase(async () => {});
  console.log('migrations applied');
  return 0;
}

async function demoCommand(args: string[]): Promise<number> {
  options('demo', args, {});
  await withDatabase(({ config, database }) => loadDemoData(config, database));
  console.log('demo data loaded');
  return 0;
}

async function importCommand(args: string[]): Promise<number> {
  const file = options('import', args, {}, 1).positionals[0];
  if (!file) throw new UsageError(`import needs a file; usage: feegate import ${COMMANDS.import!.args}`);
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new ImportError('$', `cannot read ${file} as JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const summary = await withDatabase(({ services }) => services.importer.importDocument(doc));
  console.log(`imported ${JSON.stringify(summary)}`);
  return 0;
}

async function keysIssueCommand(args: string[]): Promise<number> {
  const { values } = options('keys issue', args, {
    user: { type: 'string' },
    customer: { type: 'string' },
    merchant: { type: 'string' },
  });
  if (!values.user || !values.customer)
    throw new UsageError(
      `--user and --customer are required; usage: feegate keys issue ${COMMANDS['keys issue']!.args}`,
    );
  const body = {
    user: values.user,
    customer_id: values.customer,
    ...(values.merchant === undefined ? {} : { merchant_id: values.merchant }),
  };
  validate(CreateApiKeyBody, body, { user: '--user', customer_id: '--customer', merchant_id: '--merchant' });
  const record = await withDatabase(({ services }) =>
    services.apiKeys.issueByOperator(
      { email: body.user, customerId: body.customer_id, merchantId: body.merchant_id ?? null },
      OPERATOR_CONTEXT,
    ),
  );
  console.log(`API key ${record.id} for ${record.user} (${record.user_type}); shown once, store it now:`);
  console.log(record.api_key);
  return 0;
}

const KeyOwnerIds = Type.Object({ customer_id: Uuid, merchant_id: Type.Optional(Uuid) });
const KeyId = Type.Object({ id: Uuid });

async function keysListCommand(args: string[]): Promise<number> {
  const { values } = options('keys list', args, { customer: { type: 'string' }, merchant: { type: 'string' } });
  if (!values.customer)
    throw new UsageError(`--customer is required; usage: feegate keys list ${COMMANDS['keys list']!.args}`);
  const ids = {
    customer_id: values.customer,
    ...(values.merchant === undefined ? {} : { merchant_id: values.merchant }),
  };
  validate(KeyOwnerIds, ids, { customer_id: '--customer', merchant_id: '--merchant' });
  const records = await withDatabase(({ services }) =>
    services.apiKeys.listByOperator(ids.customer_id.toLowerCase(), ids.merchant_id?.toLowerCase() ?? null),
  );
  console.log(['id', 'key', 'user', 'status', 'access', 'expires_at', 'name'].join('\t'));
  for (const k of records)
    console.log([k.id, k.api_key, k.user, k.status, k.access, k.expires_at ?? '-', k.name ?? '-'].join('\t'));
  console.log(`${records.length} key(s)`);
  return 0;
}

async function keysRevokeCommand(args: string[]): Promise<number> {
  const { positionals } = options('keys revoke', args, {}, 1);
  if (!positionals[0])
    throw new UsageError(`the key's id is required; usage: feegate keys revoke ${COMMANDS['keys revoke']!.args}`);
  validate(KeyId, { id: positionals[0] }, { id: '<id>' });
  const id = positionals[0].toLowerCase();
  await withDatabase(({ services }) => services.apiKeys.remove(null, id, OPERATOR_CONTEXT));
  console.log(`API key ${id} revoked`);
  return 0;
}

const UserEmail = Type.Object({ email: Email });

/** The --email of a `users` command, checked as the API checks an e-mail. */
function emailOption(name: string, args: string[]): string {
  const { values } = options(name, args, { email: { type: 'string' } });
  if (!values.email) throw new UsageError(`--email is required; usage: feegate ${name} ${COMMANDS[name]!.args}`);
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
  const { values } = options('users create', args, {
    customer: { type: 'string' },
    email: { type: 'string' },
    role: { type: 'string' },
  });
  if (!values.customer || !values.email)
    throw new UsageError(
      `--customer and --email are required; usage: feegate users create ${COMMANDS['users create']!.args}`,
    );
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
  const { values } = options('users list', args, { customer: { type: 'string' } });
  if (!values.customer)
    throw new UsageError(`--customer is required; usage: feegate users list ${COMMANDS['users list']!.args}`);
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
async function signingKeysRotateCommand(args: string[]): Promise<number> {
  options('signing-keys rotate', args, {});
  const kid = await withDatabase(({ services }) => services.auth.rotateSigningKey());
  console.log(`signing key ${kid} signs access tokens from now on; running instances were told`);
  return 0;
}

async function helpCommand(): Promise<number> {
  console.log(usage());
  return 0;
}

/** Made from the table in config.ts, so it says what the service reads. */
async function helpConfigCommand(args: string[]): Promise<number> {
  options('help config', args, {});
  const rows = Object.values(SETTINGS).map(
    (s) => `  ${s.env}  default ${s.default}; ${s.values}\n      ${s.description}`,
  );
  console.log(
    [
      'Configuration: environment variables, read once at start; a blank one counts as unset (README.md says more).',
      '',
      ...rows,
    ].join('\n'),
  );
  return 0;
}

async function versionCommand(): Promise<number> {
  console.log(version());
  return 0;
}

/** Keyed by the words a user types; two-word names (`keys issue`) are subcommands. */
const COMMANDS: Record<string, Command> = {
  serve: { summary: 'run the HTTP service (what npm start does)', run: serveCommand },
  migrate: { summary: 'apply database migrations', run: migrateCommand },
  demo: { summary: 'load the demo data set', run: demoCommand },
  import: {
    args: '<file.json>',
    summary: 'import customers, merchants, users, plans and assignments',
    run: importCommand,
  },
  'keys issue': {
    args: '--user <email> --customer <uuid> [--merchant <uuid>]',
    summary: 'issue an API key; prints the full key once',
    run: keysIssueCommand,
  },
  'keys list': {
    args: '--customer <uuid> [--merchant <uuid>]',
    summary: "list a customer's (or one merchant's) keys, every status, masked",
    run: keysListCommand,
  },
  'keys revoke': {
    args: '<id>',
    summary: 'revoke (delete) an API key: refused by every running instance within milliseconds, never later than 5 s',
    run: keysRevokeCommand,
  },
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
  'signing-keys rotate': {
    summary: 'add a key that signs access tokens from now on; the old one verifies until its tokens expire',
    run: signingKeysRotateCommand,
  },
  ...secretsCommands({ options, withDatabase }),
  help: { summary: 'print this help', run: helpCommand },
  'help config': { summary: 'list the configuration variables, their defaults and values', run: helpConfigCommand },
  version: { summary: 'print the version', run: versionCommand },
};

const ALIASES: Record<string, string> = { '--help': 'help', '-h': 'help', '--version': 'version', '-v': 'version' };

function version(): string {
  // The package's own, found upwards from src/cli.ts and from a bundle alike (dist/, the tests' in .tmp/).
  const manifest = findInPackage('package.json');
  if (!manifest) throw new Error('package.json not found above the feegate sources');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

function usage(): string {
  const width = 22;
  const rows = Object.entries(COMMANDS).map(([name, c]) => {
    const left = `${name}${c.args ? ` ${c.args}` : ''}`;
    // A long synopsis gets its own line, the summary under it.
    return left.length < width - 1
      ? `  ${left.padEnd(width)}${c.summary}`
      : `  ${left}\n  ${''.padEnd(width)}${c.summary}`;
  });
  return [
    `feegate ${version()}: access and payment-plan administration API`,
    '',
    'Usage: feegate <command>   (from a clone: npm run feegate -- <command>)',
    '',
    'Commands:',
    ...rows,
    '',
    `Database: DATABASE_URL=postgres://... or the embedded database in FEEGATE_DATA_DIR (${SETTINGS.dataDir.default}),`,
    'which one process at a time may open. Configuration: feegate help config, and README.md.',
  ].join('\n');
}

/** The command named by the first one or two words, and the arguments after it. */
function findCommand(argv: string[]): { command: Command; args: string[] } {
  const [first = 'help', second] = argv;
  const two = `${first} ${second}`;
  if (second !== undefined && COMMANDS[two]) return { command: COMMANDS[two], args: argv.slice(2) };
  const one = ALIASES[first] ?? first;
  if (COMMANDS[one]) return { command: COMMANDS[one], args: argv.slice(1) };
  const known = Object.keys(COMMANDS).join(', ');
  const typed =
    Object.keys(COMMANDS).some((name) => name.startsWith(`${first} `)) && second !== undefined ? two : first;
  throw new UsageError(`unknown command "${typed}"; commands: ${known} (feegate help)`);
}

export async function run(argv: string[]): Promise<number> {
  const { command, args } = findCommand(argv);
  return command.run(args);
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  try {
    const code = await run(argv);
    if (code !== SERVING) process.exit(code);
  } catch (err) {
    console.error(`feegate: ${describeError(err)}`);
    process.exit(1);
  }
}
