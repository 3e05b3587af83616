/**
 * A configurable value in the docs is written beside its setting's name, and
 * this test reads it back against the setting's default in src/config.ts
 * SETTINGS, so a changed default fails here until the docs say it. The forms
 * read: `NAME` (value …), (`NAME`, value …), value (`NAME`), and a table row
 * whose last cell is `NAME` and whose cell before it starts with the value.
 * (The README's configuration table is checked by test/operator/config.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SETTINGS } from '../../src/config.js';
import { documents, read } from '../helpers/repository-text.js';

type AnySetting = { env: string; default: string; read(env: Record<string, string | undefined>): unknown };
const BY_NAME = new Map<string, AnySetting>(Object.values(SETTINGS).map((s) => [s.env, s as AnySetting]));

const UNIT = '(?:ms|s|seconds?|min|minutes?|h|hours?|days?|%|KiB|MiB)';
const VALUE = String.raw`(\d[\d,]*(?:\.\d+)?)\s*(${UNIT})?(?![\w])`;
const NAME = String.raw`\x60([A-Z][A-Z0-9_]+)\x60`;
const FORMS = [
  // `NAME` (value …) and (`NAME`, value …), optionally "default value"
  new RegExp(String.raw`${NAME}\s*(?:\(|,\s*)(?:default\s+)?(?:${VALUE}|\x60([^\x60]+)\x60)`, 'g'),
  // value (`NAME`)
  new RegExp(String.raw`${VALUE}\s*\(${NAME}\)`, 'g'),
  // | … | value … | `NAME` |
  new RegExp(String.raw`\|\s*${VALUE}[^|\n]*\|\s*${NAME}\s*\|\s*$`, 'gm'),
];

const MS: Record<string, number> = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, day: 86_400_000 };

/** The written number in the unit of the setting (its name ends in _MS, _SECONDS, or it has none). */
function inSettingUnit(env: string, number: number, unit: string | undefined): number | undefined {
  if (!unit || unit === '%') return number;
  if (unit === 'KiB' || unit === 'MiB')
    return env.endsWith('_BYTES') ? number * (unit === 'KiB' ? 1024 : 1024 ** 2) : undefined;
  const key = unit
    .replace(/s$/, '')
    .replace(/^second$/, 's')
    .replace(/^minute$/, 'min')
    .replace(/^hour$/, 'h');
  const ms = MS[key === '' ? 's' : key];
  if (ms === undefined) return undefined;
  if (env.endsWith('_MS')) return number * ms;
  if (env.endsWith('_SECONDS')) return (number * ms) / 1000;
  return undefined; // a duration written for a setting that is not one: told as a mismatch below
}

/** Each configurable value `text` writes that is not its setting's default, told as `where: …`. */
export function settingMismatches(text: string, where: string): string[] {
  const found: string[] = [];
  const check = (env: string, number?: string, unit?: string, literal?: string) => {
    const setting = BY_NAME.get(env);
    if (!setting) return;
    let fallback: unknown;
    try {
      fallback = setting.read({ [env]: setting.default });
    } catch {
      return; // a default in words (derived from the cores, another variable): no one value to compare
    }
    if (literal !== undefined) {
      let written: unknown;
      try {
        written = setting.read({ [env]: literal });
      } catch {
        return; // not a value of the setting (a code, a header): prose beside the name
      }
      if (JSON.stringify(written) !== JSON.stringify(fallback))
        found.push(`${where}: ${env} written as ${literal}, default ${setting.default}`);
      return;
    }
    const value = inSettingUnit(env, Number(number!.replaceAll(',', '')), unit);
    if (value !== fallback)
      found.push(`${where}: ${env} written as ${number}${unit ? ` ${unit}` : ''}, default ${setting.default}`);
  };
  const [named, before, row] = FORMS;
  // Prose is read with its wrapped lines joined; a table row is one line.
  const joined = text.replace(/\n\s*/g, ' ');
  for (const m of joined.matchAll(named!)) check(m[1]!, m[2], m[3], m[4]);
  for (const m of joined.matchAll(before!)) check(m[3]!, m[1], m[2]);
  for (const m of text.matchAll(row!)) check(m[3]!, m[1], m[2]);
  return found;
}

/** Documents without the README's configuration table, which lists each default as one would set it. */
function prose(document: string): string {
  const text = read(document);
  if (document !== 'README.md') return text;
  return text.replace(/^## Configuration\n[\s\S]*?(?=^## )/m, '');
}

describe('configurable values in the docs', () => {
  it("every value written beside a setting's name is its default in src/config.ts", () => {
    const wrong = documents().flatMap((document) => settingMismatches(prose(document), document));
    assert.deepEqual(wrong, [], `docs that disagree with SETTINGS:\n${wrong.join('\n')}`);
  });

  it('reads each form, in the units of the setting, and tells a value that is not the default', () => {
    const right = [
      '`WEBHOOK_TIMEOUT_SECONDS` (10 s)',
      'within 10 s (`WEBHOOK_TIMEOUT_SECONDS`)',
      '(`DATABASE_STATEMENT_TIMEOUT_MS`, 60 s)',
      '`SESSION_MAX_AGE_SECONDS` (default 30 days)',
      '`LOGIN_FAILURE_WINDOW_SECONDS` (15 minutes)',
      '`LOGIN_HASH_CPU_PERCENT` (75)',
      '`BODY_LIMIT_BYTES` (1 MiB)',
      '`WEBHOOK_RETRY_SCHEDULE` (`5s,5m,30m,2h,5h,10h,10h`)',
      '| a statement waits for a lock | 5 s, then 503 | `DATABASE_LOCK_TIMEOUT_MS` |',
      '`REQUEST_TIMEOUT_SECONDS` (`request_timeout`)',
    ];
    assert.deepEqual(settingMismatches(right.join('\n'), 'x'), []);
    const wrong = [
      '`WEBHOOK_TIMEOUT_SECONDS` (15 s)',
      'within 1 min (`WEBHOOK_TIMEOUT_SECONDS`)',
      '`WEBHOOK_RETRY_SCHEDULE` (`5s,5m`)',
      '| a statement waits for a lock | 10 s, then 503 | `DATABASE_LOCK_TIMEOUT_MS` |',
      '`LOGIN_MAX_FAILURES` (10 s)',
    ];
    assert.deepEqual(settingMismatches(wrong.join('\n'), 'x'), [
      'x: WEBHOOK_TIMEOUT_SECONDS written as 15 s, default 10',
      'x: WEBHOOK_RETRY_SCHEDULE written as 5s,5m, default 5s,5m,30m,2h,5h,10h,10h',
      'x: LOGIN_MAX_FAILURES written as 10 s, default 10',
      'x: WEBHOOK_TIMEOUT_SECONDS written as 1 min, default 10',
      'x: DATABASE_LOCK_TIMEOUT_MS written as 10 s, default 5000',
    ]);
  });
});
