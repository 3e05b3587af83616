/**
 * The console's key form for restricted keys (contract section 22), in headless
 * Chromium: permissions chosen by resource and allowed addresses, a bad address
 * refused with its item named, and the listing's effective permissions; axe on
 * each state, screenshots in /tmp/shots-i41/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import { newConsolePage, openConsole } from '../helpers/console-session.js';
import type { TestDatabase } from '../helpers/database.js';
import { seedWorld, type World } from '../helpers/fixtures.js';

const SHOTS = '/tmp/shots-i41';

describe('console: restricted keys', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let world: World;
  const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    let first: Page;
    ({ database, app, base, browser, page: first } = await openConsole([]));
    await first.context().close();
    world = await seedWorld(app);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('creates a key with permissions by resource and allowed addresses, and lists what it may do', async (t) => {
    const errors: string[] = [];
    const page = await newConsolePage(browser, errors);
    t.after(() => page.context().close());
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').fill(world.login.user);
    await page.getByLabel('Password').fill(world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    await page.getByText('Create a key').click();
    await page.getByLabel('Integration user (e-mail)').fill('pricing@alpha.test');
    await page.getByLabel('Restrict what this key may do').check();
    const level = (resource: string) => page.getByRole('combobox', { name: resource, exact: true });
    await level('Merchants').selectOption('read');
    await level('Fee rules and plans').selectOption('write');
    for (const resource of ['API keys', 'Webhooks', 'Users', 'Audit trail']) await level(resource).selectOption('none');
    const addresses = page.getByLabel(/Allowed addresses/);
    await addresses.fill('203.0.113.0/24, 10.0.0.0/33');
    await shot(page, 'key-form-restricted');
    assert.deepEqual(await seriousViolations(page), [], 'axe on the restricted key form');
    await page.getByRole('button', { name: 'Create key' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /allowed_ips\[1\]/, 'the refused item is named');
    await shot(page, 'key-form-bad-address');

    await addresses.fill('203.0.113.0/24, 2001:DB8::/32');
    await page.getByRole('button', { name: 'Create key' }).click();
    const createdKey = (await page.getByTestId('new-key').innerText()).trim();
    const answer = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      remoteAddress: '203.0.113.5',
      headers: { 'x-api-key': createdKey },
    });
    assert.equal(answer.statusCode, 403, 'api_keys:read was left out');
    assert.equal(answer.json().required_permission, 'api_keys:read');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const row = page.getByRole('row', { name: /pricing@alpha\.test/ });
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /merchants: read, fee rules and plans: write/);
    assert.match(text, /from 203\.0\.113\.0\/24, 2001:db8::\/32/);
    await shot(page, 'keys-listing-permissions');
    assert.deepEqual(await seriousViolations(page), [], 'axe on the listing');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });
});
