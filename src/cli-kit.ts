/**
 * What every command of the command line is made of (src/cli.ts): its entry in
 * a table, its options parsed into one usage line on error, its input checked
 * with the API's own schemas, and the database opened for its work.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { TSchema } from '@sinclair/typebox';
import { loadConfig } from './config.js';
import { UsageError } from './errors.js';
import { withKeyRing } from './key-ring-file.js';
import { createStrictAjv } from './plugins/validation.js';
import { openConfiguredDatabase } from './server.js';
import { createServices } from './services.js';

/** Exit status, or SERVING when the command keeps the process running. */
export const SERVING = -1;

export interface Command {
  /** Arguments after the command's name, as shown in help. */
  args?: string;
  summary: string;
  run(args: string[]): Promise<number>;
}

/** Commands keyed by the words a user types; two-word names (`keys issue`) are subcommands. */
export type CommandTable = Record<string, Command>;

/** A command's usage line: its name and the arguments its entry in `table` shows. */
export function usageLine(table: CommandTable, name: string): string {
  return `usage: feegate ${name}${table[name]?.args ? ` ${table[name].args}` : ''}`;
}

export async function withDatabase<T>(
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
export function options<T extends NonNullable<ParseArgsConfig['options']>>(
  table: CommandTable,
  name: string,
  args: string[],
  spec: T,
  positionals = 0,
) {
  const usage = usageLine(table, name);
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
export function validate(schema: TSchema, value: Record<string, unknown>, flags: Record<string, string>): void {
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
