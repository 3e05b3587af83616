/**
 * `feegate secrets …`: the key ring's commands (docs/production.md, "Keys and
 * secrets"). Declared here, beside the command line's table, with the two
 * helpers every command uses handed in.
 */
import type { ParseArgsConfig } from 'node:util';
import { generateKeyEntry } from './lib/key-ring.js';
import type { Services } from './services.js';

interface Tools {
  options(name: string, args: string[], spec: NonNullable<ParseArgsConfig['options']>): unknown;
  withDatabase<T>(work: (ctx: { services: Services }) => Promise<T>, prepare?: boolean): Promise<T>;
}

export function secretsCommands({ options, withDatabase }: Tools) {
  return {
    'secrets generate-key': {
      summary: 'print a new key ring entry (<kid>:<base64 key>) for FEEGATE_SECRET_KEYS; it touches no database',
      async run(args: string[]): Promise<number> {
        options('secrets generate-key', args, {});
        console.log(generateKeyEntry());
        return 0;
      },
    },
    'secrets rotate': {
      summary: "re-encrypt every stored secret under the ring's first key (in batches; run it again to resume)",
      async run(args: string[]): Promise<number> {
        options('secrets rotate', args, {});
        const report = await withDatabase(({ services }) => services.secrets.rotate());
        for (const { column, rotated, unreadable } of report)
          console.log(
            `${column}: ${rotated} re-encrypted${unreadable ? `, ${unreadable} that do not open left as they are` : ''}`,
          );
        console.log(
          'every readable secret is under the first key; older keys may leave the ring once no instance needs them',
        );
        return 0;
      },
    },
    'secrets check': {
      summary: 'list the key ids the stored secrets need, with counts; exit status 1 when the ring lacks one',
      async run(args: string[]): Promise<number> {
        options('secrets check', args, {});
        const uses = await withDatabase(({ services }) => services.secrets.check(), false);
        console.log(['kid', 'values', 'ring'].join('\t'));
        for (const use of uses) console.log([use.kid, use.values, use.inRing ? 'present' : 'MISSING'].join('\t'));
        const missing = uses.filter((use) => !use.inRing).map((use) => use.kid);
        console.log(
          missing.length ? `the key ring lacks ${missing.join(', ')}` : 'every stored secret names a key of the ring',
        );
        return missing.length ? 1 : 0;
      },
    },
  };
}
