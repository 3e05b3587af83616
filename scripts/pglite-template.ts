/**
 * `node --import tsx scripts/pglite-template.ts`: writes the data directory a
 * new embedded database starts from (src/db/pglite-worker.mjs says why), for the
 * installed PGlite build, as assets/pglite-initdb-<version>.tar.br, and removes
 * those of other builds. Run it after upgrading @electric-sql/pglite
 * (test/platform/embedded-database.test.ts fails until then). initdb's minute
 * and its memory are spent once, here, instead of on every first start.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_SETTINGS, PGLITE_TEMPLATE } from '../src/db/pglite.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const target = path.join(root, PGLITE_TEMPLATE);
// Exactly what PGlite runs for a new directory, with the service's settings.
const pg = await PGlite.create('memory://', { initDbStartParams: PGLITE_SETTINGS });
const archive = Buffer.from(await (await pg.dumpDataDir('none')).arrayBuffer());
await pg.close();
// Brotli at its best: 40 MB of data files (mostly zeros and catalogs) to about 1.4 MB.
const compressed = brotliCompressSync(archive, {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 11,
    [constants.BROTLI_PARAM_LGWIN]: 24,
    [constants.BROTLI_PARAM_SIZE_HINT]: archive.length,
  },
});
mkdirSync(path.dirname(target), { recursive: true });
for (const old of readdirSync(path.dirname(target)))
  if (old.startsWith('pglite-initdb-')) rmSync(path.join(path.dirname(target), old));
writeFileSync(target, compressed);
console.log(
  `${path.relative(root, target)}: ${archive.length} bytes of data directory, ${compressed.length} compressed`,
);
