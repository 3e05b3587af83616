/**
 * The bench scripts' command lines: wrong input gets one line on stderr and exit
 * code 2, before anything is created, never a stack trace.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

export function refuse(script: string, message: string): never {
  console.error(`${script}: ${message}`);
  process.exit(2);
}

/** node:util's parseArgs (strict: unknown options and stray arguments refused), with refusals as above. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(script: string, options: T) {
  try {
    return parseArgs({ options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    return refuse(script, (err as Error).message);
  }
}

/** A whole number within [min, max], or the refusal naming the option. */
export function wholeNumber(script: string, option: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    refuse(script, `--${option} takes a whole number from ${min} to ${max}; got "${text}"`);
  return value;
}
