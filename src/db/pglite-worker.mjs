// The embedded PostgreSQL (PGlite) in its own thread, answering src/db/pglite-rpc.ts.
// PGlite runs SQL synchronously in WebAssembly: on the service's thread every
// query held the event loop, and cheap requests waited behind a login's SQL.
// Plain JavaScript so that it loads in a worker without a TypeScript loader,
// from the sources as from the bundle (scripts/build.mjs copies it).
//
// Messages in: { id, op, ... } with op one of query, exec, begin, commit,
// rollback, listen, unlisten, close. Out: { id, result } or { id, error }, and
// { notification: listenId, payload } for LISTEN.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

/** @type {{ dataDir: string; startParams: string[]; initDbStartParams: string[]; loadDataDir?: Uint8Array; templatePath?: string }} */
const input = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** Errors cross the thread as plain data: message, stack and every scalar field (`code`, `constraint`, `detail`...). */
function serializeError(err) {
  if (!(err instanceof Error)) return { message: String(err) };
  const out = { name: err.name, message: err.message, stack: err.stack };
  for (const [key, value] of Object.entries(err)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) out[key] = value;
  }
  return out;
}

/**
 * What a new data directory starts from. initdb in WebAssembly runs a second
 * PostgreSQL beside the first, restores a 128 MiB copy of its heap before each
 * step and hands its result over as a 40 MB archive: the first start's peak
 * memory is more than twice the service's own, and the process keeps it
 * (docs/performance.md). Its output is the same for every install of one PGlite
 * build, so the package ships it (scripts/pglite-template.ts) and a new
 * directory is unpacked from it; PGlite then opens it as on any restart. initdb
 * remains the fallback for a build without a template.
 */
async function prepareNewDirectory() {
  if (input.loadDataDir) return new Blob([input.loadDataDir]);
  if (!input.templatePath) return undefined;
  if (input.dataDir.startsWith('memory://')) return new Blob([brotliDecompressSync(readFileSync(input.templatePath))]);
  if (!existsSync(path.join(input.dataDir, 'PG_VERSION'))) unpackTemplate(input.templatePath, input.dataDir);
  return undefined;
}

/**
 * Writes the files of the template's archive into `dir`, PG_VERSION (by which
 * PGlite knows a directory is complete) last. By hand rather than with
 * node-tar: its streaming extraction left tens of MB of small freed buffers
 * resident in this thread for good; here the archive is one buffer, freed as a
 * whole. The archive is PGlite's own dumpDataDir output: ustar, directories and
 * regular files only.
 */
function unpackTemplate(file, dir) {
  const tar = brotliDecompressSync(readFileSync(file), { chunkSize: 48 << 20 });
  const field = (at, length) => tar.toString('utf8', at, at + length).replace(/\0.*$/s, '');
  let versionFile;
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const prefix = field(at + 345, 155);
    const name = path.normalize(`${prefix ? `${prefix}/` : ''}${field(at, 100)}`).replace(/^\/+/, '');
    const size = parseInt(field(at + 124, 12).trim() || '0', 8);
    const type = field(at + 156, 1) || '0';
    if (name.split(path.sep).includes('..')) throw new Error(`unsafe path in the PGlite template: ${name}`);
    const target = path.join(dir, name);
    const content = tar.subarray(at + 512, at + 512 + size);
    if (type === '5') mkdirSync(target, { recursive: true });
    else if (type !== '0') throw new Error(`unexpected entry type ${type} in the PGlite template`);
    else if (name === 'PG_VERSION') versionFile = { target, content };
    else {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  if (!versionFile) throw new Error('the PGlite template has no PG_VERSION');
  writeFileSync(versionFile.target, versionFile.content);
}

let db;
try {
  const loadDataDir = await prepareNewDirectory();
  db = await PGlite.create(input.dataDir, {
    startParams: [...PGlite.defaultStartParams, ...input.startParams],
    initDbStartParams: input.initDbStartParams,
    ...(loadDataDir ? { loadDataDir } : {}),
  });
  port.postMessage({ id: 0, result: 'ready' });
} catch (err) {
  port.postMessage({ id: 0, error: serializeError(err) });
  process.exit(1);
}

const identity = (value) => value;

/**
 * Open transactions by id. Each one is a PGlite `transaction()` held open until
 * the main thread commits or rolls back: PGlite's own transaction lock keeps
 * every other query waiting meanwhile, as it does in-process.
 */
const transactions = new Map();
let nextTransaction = 1;

async function begin() {
  const id = nextTransaction++;
  let decide;
  const decision = new Promise((resolve) => (decide = resolve));
  let opened;
  const open = new Promise((resolve) => (opened = resolve));
  const outcome = db.transaction(async (tx) => {
    transactions.set(id, { tx, decide });
    opened();
    if ((await decision) === 'rollback') await tx.rollback();
  });
  outcome.catch(() => {}).finally(() => transactions.delete(id));
  // BEGIN itself can fail; then there is no transaction to hand out.
  await Promise.race([open, outcome]);
  transactions.get(id).outcome = outcome;
  return id;
}

async function finish(id, decision) {
  const entry = transactions.get(id);
  if (!entry) throw new Error('Transaction is closed');
  entry.decide(decision);
  await entry.outcome;
}

/** Where a statement runs: inside its transaction, or on its own. */
function target(tx) {
  if (tx === undefined) return db;
  const entry = transactions.get(tx);
  if (!entry) throw new Error('Transaction is closed');
  return entry.tx;
}

/** Results as plain data; types the caller parses itself come back as the text PostgreSQL sent. */
async function query({ sql, params, rowMode, paramTypes, rawTypes, tx }) {
  const parsers = Object.fromEntries(rawTypes.map((type) => [type, identity]));
  return target(tx).query(sql, params, { rowMode, paramTypes, parsers });
}

/** LISTEN subscriptions by the id the main thread gave them. */
const listeners = new Map();

const handlers = {
  query,
  exec: ({ sql, tx }) => target(tx).exec(sql),
  begin,
  commit: ({ tx }) => finish(tx, 'commit'),
  rollback: ({ tx }) => finish(tx, 'rollback'),
  async listen({ channel, listener }) {
    listeners.set(
      listener,
      await db.listen(channel, (payload) => port.postMessage({ notification: listener, payload })),
    );
  },
  async unlisten({ listener }) {
    const unlisten = listeners.get(listener);
    listeners.delete(listener);
    await unlisten?.();
  },
  async close() {
    if (!db.closed) await db.close();
  },
};

port.on('message', async (message) => {
  try {
    const result = await handlers[message.op](message);
    port.postMessage({ id: message.id, result });
  } catch (err) {
    port.postMessage({ id: message.id, error: serializeError(err) });
  }
});
