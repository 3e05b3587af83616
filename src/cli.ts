/**
 * The operator's command line: `feegate <command>` (npm run feegate -- <command>).
 * Each command is one entry of COMMANDS with its own small function (the keys'
 * in cli-keys.ts, the users' in cli-users.ts, the secrets' in cli-secrets.ts);
 * help is made from the table. Errors print one line (cli-errors.ts) and exit 1.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describeError } from './cli-errors.js';
import { type Command, type CommandTable, options, SERVING, usageLine, withDatabase } from './cli-kit.js';
import { KEYS_COMMANDS } from './cli-keys.js';
import { secretsCommands } from './cli-secrets.js';
import { USERS_COMMANDS } from './cli-users.js';
import { loadConfig, SETTINGS } from './config.js';
import { findInPackage } from './db/database.js';
import { ImportError, UsageError } from './errors.js';
import { loadDemoData, serve } from './server.js';

async function serveCommand(args: string[]): Promise<number> {
  options(COMMANDS, 'serve', args, {});
  await serve(loadConfig());
  return SERVING;
}

async function migrateCommand(args: string[]): Promise<number> {
  options(COMMANDS, 'migrate', args, {});
  await withDatabase(async () => {});
  console.log('migrations applied');
  return 0;
}

async function demoCommand(args: string[]): Promise<number> {
  options(COMMANDS, 'demo', args, {});
  await withDatabase(({ config, database }) => loadDemoData(config, database));
  console.log('demo data loaded');
  return 0;
}

async function importCommand(args: string[]): Promise<number> {
  const file = options(COMMANDS, 'import', args, {}, 1).positionals[0];
  if (!file) throw new UsageError(`import needs a file; ${usageLine(COMMANDS, 'import')}`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ImportError('$', `cannot read ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    // V8's message quotes the text where it stopped, which may be a secret (a wrong file named): only where.
    const where = /position \d+|line \d+ column \d+/.exec((err as Error).message)?.[0];
    throw new ImportError('$', `cannot read ${file} as JSON${where ? ` (at ${where})` : ''}; its text is not shown`);
  }
  const summary = await withDatabase(({ services }) => services.importer.importDocument(doc));
  console.log(`imported ${JSON.stringify(summary)}`);
  return 0;
}

async function signingKeysRotateCommand(args: string[]): Promise<number> {
  options(COMMANDS, 'signing-keys rotate', args, {});
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
  options(COMMANDS, 'help config', args, {});
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
const COMMANDS: CommandTable = {
  serve: { summary: 'run the HTTP service (what npm start does)', run: serveCommand },
  migrate: { summary: 'apply database migrations', run: migrateCommand },
  demo: { summary: 'load the demo data set', run: demoCommand },
  import: {
    args: '<file.json>',
    summary: 'import customers, merchants, users, plans and assignments',
    run: importCommand,
  },
  ...KEYS_COMMANDS,
  ...USERS_COMMANDS,
  'signing-keys rotate': {
    summary: 'add a key that signs access tokens from now on; the old one verifies until its tokens expire',
    run: signingKeysRotateCommand,
  },
  ...secretsCommands({ options: (name, args, spec) => options(COMMANDS, name, args, spec), withDatabase }),
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
