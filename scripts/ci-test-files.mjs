#!/usr/bin/env node
/**
 * Which test files each of CI's two runs takes (`.ci/run`). Both runs running
 * the whole suite took about twice one suite's processor time, and on a loaded
 * two-core machine that outgrew CI's 90 minutes; so they share it:
 * - a file whose behaviour depends on the database (it names `ON_POSTGRES` or
 *   `TEST_DATABASE_URL`, or runs the command line against a database) runs in both;
 * - a file that needs Redis runs in the PostgreSQL run, which has Redis;
 * - every other file runs in one of the two, alternately in name order.
 * Usage: node scripts/ci-test-files.mjs embedded|postgres   (prints one path a line)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const run = process.argv[2];
if (process.argv.length !== 3 || (run !== 'embedded' && run !== 'postgres')) {
  console.error('usage: node scripts/ci-test-files.mjs embedded|postgres');
  process.exit(2);
}

const DATABASE_DEPENDENT = /\bON_POSTGRES\b|\bTEST_DATABASE_URL\b|\buseCliDatabase\b/;
const NEEDS_REDIS = /\bNEEDS_REDIS\b|\bTEST_REDIS_URL\b/;

const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
const files = readdirSync(path.join(root, 'test'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((dir) =>
    readdirSync(path.join(root, 'test', dir.name))
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `test/${dir.name}/${name}`),
  )
  .sort();

let alternate = 0;
for (const file of files) {
  const text = readFileSync(path.join(root, file), 'utf8');
  const takes = DATABASE_DEPENDENT.test(text)
    ? run
    : NEEDS_REDIS.test(text)
      ? 'postgres'
      : alternate++ % 2 === 0
        ? 'embedded'
        : 'postgres';
  if (takes === run) console.log(file);
}
