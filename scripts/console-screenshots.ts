/**
 * Screenshots of the console for docs/console.md, on the demo data set, at 1280
 * and 390 px. Run again whenever the pages change:
 *   node --import tsx scripts/console-screenshots.ts
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { testConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { DEMO_LOGINS, demoMerchantId } from '../src/features/operator/demo-data.js';
import { loadDemoData } from '../src/server.js';
import { CHROMIUM_MISSING, buildConsoleIfStale, launchChromium } from '../test/helpers/console-browser.js';

if (CHROMIUM_MISSING) throw new Error(CHROMIUM_MISSING);
await buildConsoleIfStale();
const config = testConfig();
const database = await openDatabase({});
await database.migrate();
await loadDemoData(config, database);
const app = await buildApp({ config, database, ownsDatabase: true });
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/console`;
const browser = await launchChromium();
const out = new URL('../docs/console/', import.meta.url).pathname;
try {
  for (const [width, height, suffix] of [
    [1280, 800, 'desktop'],
    [390, 844, 'mobile'],
  ] as const) {
    const page = await (await browser.newContext({ viewport: { width, height } })).newPage();
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in to the back office' }).waitFor();
    await page.screenshot({ path: `${out}sign-in-${suffix}.png` });
    await page.getByLabel('E-mail').fill(DEMO_LOGINS[0].user);
    await page.getByLabel('Password').fill(DEMO_LOGINS[0].password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByText('Create a key').click();
    await page.getByLabel('Integration user (e-mail)').fill('checkout@acme.test');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();
    await page.screenshot({ path: `${out}api-keys-${suffix}.png`, fullPage: true });
    await page.getByRole('link', { name: 'Fee plans' }).click();
    await page.locator('table').first().waitFor();
    await page.screenshot({ path: `${out}fee-plans-${suffix}.png`, fullPage: true });
    await page.goto(`${base}/merchants/${demoMerchantId(1)}`);
    await page.locator('main h1').waitFor();
    await page
      .getByRole('status')
      .waitFor({ state: 'detached' })
      .catch(() => {});
    await page.screenshot({ path: `${out}merchant-${suffix}.png`, fullPage: true });
  }
} finally {
  await browser.close();
  await app.close();
}
console.log(`screenshots written to ${out}`);
