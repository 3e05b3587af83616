/**
 * Line 2c: what restricted keys cost key authentication (contract section 22:
 * a key holding 5 permissions and 3 allowed ranges, at least 0.9x the
 * throughput of an unrestricted key, in the same run). GET /v1/users/me with
 * either kind of key, in rounds ordered A B B A so the machine's drift falls
 * on both alike. The client (127.0.0.1) is in the last of the three ranges, so every
 * request matches past two others.
 */
import { expectStatus, type LoadResult, mergeLoads, request, runLoad, warmThenRun } from './load.js';
import { createKeys, type PhaseContext } from './phases.js';

export interface RestrictedKeyAuth {
  unrestricted: LoadResult;
  restricted: LoadResult;
  /** restricted.okPerSec / unrestricted.okPerSec. */
  ratio: number;
}

export const RESTRICTED_SETTINGS = {
  permissions: ['merchants:read', 'fee_rules:read', 'fee_rules:write', 'webhooks:read', 'audit:read'],
  allowed_ips: ['192.0.2.0/24', '2001:db8::/32', '127.0.0.0/8'],
};
const ROUNDS = 2;
const PATH = '/v1/users/me';

export async function restrictedKeyAuth(ctx: PhaseContext): Promise<RestrictedKeyAuth> {
  const kinds = {
    unrestricted: await createKeys(ctx, { users: 10, userPrefix: 'bench-unrestricted' }),
    restricted: await createKeys(ctx, { users: 10, userPrefix: 'bench-restricted', settings: RESTRICTED_SETTINGS }),
  };
  const check = await request(ctx.baseUrl, 'GET', PATH, { headers: { 'x-api-key': kinds.restricted[0]! } });
  expectStatus(check, 200, `GET ${PATH} with a restricted key`);
  const options = (keys: string[], seconds: number) => ({
    path: PATH,
    connections: ctx.connections,
    durationSeconds: seconds,
    rotateHeaders: keys.map((key) => ({ 'x-api-key': key })),
  });
  const roundSeconds = Math.max(1, Math.round(ctx.durationSeconds / (2 * ROUNDS)));
  // Each kind warmed once: its keys verified and cached before anything is timed.
  for (const keys of Object.values(kinds)) await warmThenRun(ctx.baseUrl, options(keys, 1), 2);
  const runs: Record<keyof typeof kinds, LoadResult[]> = { unrestricted: [], restricted: [] };
  for (let round = 0; round < 2 * ROUNDS; round++) {
    // A B B A …: a drift of the machine over the run falls on both kinds alike.
    const kind = (round + Math.floor(round / 2)) % 2 === 0 ? 'unrestricted' : 'restricted';
    runs[kind].push(await runLoad(ctx.baseUrl, options(kinds[kind], roundSeconds)));
  }
  const unrestricted = mergeLoads(runs.unrestricted);
  const restricted = mergeLoads(runs.restricted);
  return { unrestricted, restricted, ratio: restricted.okPerSec / unrestricted.okPerSec };
}
