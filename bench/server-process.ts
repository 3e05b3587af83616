/**
 * The service under test as a child process: what `npm start` runs (the bundle
 * built by scripts/build.mjs, then `node dist/feegate.mjs serve`), so the bench
 * measures the real startup path, logger and process, and its memory can be read
 * from /proc without the bench's own heap.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resident set size in bytes: VmRSS now and VmHWM (the kernel's own peak). */
function readMemory(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return undefined; // not Linux, or the process is gone
  }
}

export interface ServerProcess {
  readonly baseUrl: string;
  readonly pid: number;
  /** Highest resident set size seen so far, in bytes. */
  peakRss(): number;
  /** Resident set size now, in bytes (0 when it cannot be read). */
  rss(): number;
  /** Log lines the service wrote, counted by level and message. */
  logCounts(): Record<string, number>;
  stop(): Promise<void>;
}

export interface StartOptions {
  env: Record<string, string>;
  /** Extra node flags, e.g. --cpu-prof (which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
}

/** The node flags of `npm start` (package.json's start script), so the bench runs the same process. */
export function startNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } };
  const flags = /^exec node (.*?)\s*dist\/feegate\.mjs serve$/.exec(scripts.start);
  if (!flags) throw new Error(`the start script is not "exec node [flags] dist/feegate.mjs serve": ${scripts.start}`);
  return flags[1] ? flags[1].split(/\s+/) : [];
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [...startNodeFlags(), ...(options.nodeArgs ?? []), 'dist/feegate.mjs', 'serve'],
    {
      cwd: ROOT,
      env: { ...process.env, ...options.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // Keep the tail of the output for failure messages, and count what the service logged:
  // a flood of error lines is itself a finding (and a cost), so it is reported, not echoed.
  const tail: string[] = [];
  const logged = new Map<string, number>();
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    tail.push(text);
    if (tail.length > 50) tail.shift();
    for (const match of text.matchAll(/"level":(\d+).*?"msg":"([^"]*)"/g)) {
      const key = `level ${match[1]}: ${match[2]}`;
      logged.set(key, (logged.get(key) ?? 0) + 1);
    }
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  let peak = 0;
  const sample = () => {
    const memory = readMemory(child.pid!);
    if (memory) peak = Math.max(peak, memory.rss, memory.hwm);
  };
  // VmHWM alone is the peak; sampling also catches platforms where it is missing.
  const sampler = setInterval(sample, 200);
  sampler.unref();

  const server: ServerProcess = {
    baseUrl,
    pid: child.pid!,
    peakRss: () => {
      sample();
      return peak;
    },
    rss: () => readMemory(child.pid!)?.rss ?? 0,
    logCounts: () => Object.fromEntries(logged),
    stop: () => stopChild(child, exited, sampler),
  };

  try {
    await waitReady(baseUrl, exited, options.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await server.stop();
    throw new Error(`${(err as Error).message}\n--- server output ---\n${tail.join('')}`);
  }
  return server;
}

async function waitReady(baseUrl: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  let gone: number | null | undefined;
  void exited.then((code) => (gone = code));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone !== undefined) throw new Error(`server exited with code ${gone} before it was ready`);
    try {
      const response = await fetch(`${baseUrl}/ready`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server not ready within ${timeoutMs} ms`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, sampler: NodeJS.Timeout): Promise<void> {
  clearInterval(sampler);
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  // The service finishes requests in flight and force-exits after 10 s; wait a little longer.
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
