/**
 * The bundle `npm start` runs, served in processes of their own for the trace
 * tests (the SDK registers global instrumentation): each on a free loopback port
 * with the embedded database and the demo data, stopped after the file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { bundleService } from '../../scripts/service-bundle.mjs';
import { DEMO_LOGINS } from '../../src/features/operator/demo-data.js';
import { TEST_PROCESS_HASHING } from './cli.js';
import { freePort } from './free-port.js';
import { waitFor } from './wait.js';

export const [LOGIN] = DEMO_LOGINS;
/** OTLP's SpanKind of a server span. */
export const SERVER_KIND = 2;
/** The caller's span in the traceparents the tests send. */
export const PARENT_SPAN_ID = '00f067aa0ba902b7';

export interface TracedService {
  base: string;
  log(): string;
  stop(): Promise<void>;
}

/** Registers the file's bundle and clean-up; answers `serve(name, env)`. */
export function tracedServices(): (name: string, env: Record<string, string>) => Promise<TracedService> {
  let dir: string;
  let bundle: string;
  const children: ChildProcess[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'feegate-traces-'));
    const outdir = path.resolve(`.tmp/test-traces-${process.pid}`);
    process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
    bundle = await bundleService(outdir);
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  /** The bundle serving on a free loopback port with the demo data, and `env`; answers its base URL and its log. */
  return async function serve(name: string, env: Record<string, string>) {
    const port = await freePort();
    const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OTEL_')));
    const child = spawn(process.execPath, [bundle, 'serve'], {
      env: {
        ...clean,
        DATABASE_URL: '',
        REDIS_URL: '',
        FEEGATE_DATA_DIR: path.join(dir, name),
        FEEGATE_DEMO: 'true',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'info',
        ...TEST_PROCESS_HASHING,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let log = '';
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    const base = `http://127.0.0.1:${port}`;
    const exited = once(child, 'exit');
    try {
      await waitFor(
        async () => {
          try {
            return (await fetch(`${base}/health`)).ok;
          } catch {
            return false;
          }
        },
        'the service serves',
        { timeoutMs: 90_000, intervalMs: 250 },
      );
    } catch (err) {
      // Stopped now: one that starts late would export its spans into the next test's count.
      child.kill('SIGKILL');
      await exited;
      throw err;
    }
    // Awaited: a traced service flushes its last spans as it stops, and they must not land in the next test's count.
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    };
    return { base, log: () => log, stop };
  };
}

/** A login and a read of one merchant by id, the first with the caller's `traceparent` if given; answers statuses and bodies. */
export async function session(base: string, traceparent?: string) {
  const login = await fetch(`${base}/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) },
    body: JSON.stringify(LOGIN),
  });
  const token = ((await login.json()) as { token: { access_token: string } }).token.access_token;
  const auth = { authorization: `Bearer ${token}` };
  const merchants = (await (await fetch(`${base}/v1/merchants?size=1`, { headers: auth })).json()) as any;
  const merchantId: string = merchants._embedded.merchants[0].id;
  const one = await fetch(`${base}/v1/merchants/${merchantId}`, { headers: auth });
  return { token, merchantId, answers: [login.status, one.status, JSON.stringify(await one.json()).length] };
}
