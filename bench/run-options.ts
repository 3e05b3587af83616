/**
 * What `npm run bench` is asked (bench/run.ts): which phases, how long each
 * load lasts, the login storm's rounds, the embedded database or PostgreSQL,
 * CPU profiles, and whether the PostgreSQL database is kept. Wrong input is
 * refused before anything is created (command-line.ts).
 */
import { parseOptions, refuse, wholeNumber } from './command-line.js';
import { STORM_ROUNDS } from './probed-phases.js';

const PHASES = [
  'firststart',
  'keyauth',
  'bearer',
  'listing',
  'fullpage',
  'at',
  'storm',
  'bulk',
  'scheduled',
  'approval',
  'webhooks',
  'ratelimit',
  'idempotency',
  'restricted',
  'quotes',
  'tracing',
  'auditexport',
] as const;
type Phase = (typeof PHASES)[number];

const SCRIPT = 'npm run bench';

export function runOptions() {
  const values = parseOptions(SCRIPT, {
    embedded: { type: 'boolean', default: false },
    only: { type: 'string' },
    duration: { type: 'string', default: '10' },
    // Quiet/storm rounds of the login storm; its verdict is their median factor.
    rounds: { type: 'string', default: String(STORM_ROUNDS) },
    profile: { type: 'boolean', default: false },
    // Leave the PostgreSQL database behind for EXPLAIN ANALYZE after the run.
    'keep-db': { type: 'boolean', default: false },
  });
  const only = new Set((values.only?.split(',') ?? PHASES).map((p) => p.trim()));
  for (const p of only)
    if (!(PHASES as readonly string[]).includes(p)) refuse(SCRIPT, `--only takes ${PHASES.join(',')}; got "${p}"`);
  return {
    wanted: (p: Phase) => only.has(p),
    durationSeconds: wholeNumber(SCRIPT, 'duration', values.duration, 1, 3600),
    stormRounds: wholeNumber(SCRIPT, 'rounds', values.rounds, 1, 100),
    embedded: values.embedded,
    profile: values.profile,
    keepDb: values['keep-db'],
  };
}
