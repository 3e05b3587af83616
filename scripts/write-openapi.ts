/**
 * Writes the OpenAPI document as the app generates it, without listening and on
 * a throw-away embedded database: `node --import tsx scripts/write-openapi.ts <file>`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const database = await openDatabase({ dataDir: 'memory://' });
  await database.migrate();
  const app = await buildApp({ config: testConfig(), database, ownsDatabase: true });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: write-openapi.ts <file.json>');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(await openapiDocument(), null, 2)}\n`);
  console.log(`wrote ${file}`);
}
