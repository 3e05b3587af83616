/**
 * The console's merchant pages end to end, in headless Chromium against the real
 * service: add a merchant (the refusals of the service beside their fields, the
 * tax identifier following the country), its details, the edit form, and
 * deactivation and reactivation after a confirmation. Every page is checked
 * with axe; screenshots go to .tmp/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { openConsole } from '../helpers/console-session.js';
import type { TestDatabase } from '../helpers/database.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import { issueKey, seedWorld, type World } from '../helpers/fixtures.js';

const SHOTS = '.tmp/console-merchants';

describe('console: merchants in the browser', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let world: World;
  let merchantKey = '';
  let merchantId = '';
  const browserErrors: string[] = [];

  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  const noSeriousViolations = async (where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);
  const me = () => fetch(`${base}/v1/users/me`, { headers: { 'x-api-key': merchantKey } });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ({ database, app, base, browser, page } = await openConsole(browserErrors));
    world = await seedWorld(app);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('signs in and lists the merchants with their status', async () => {
    await page.goto(`${base}/console/merchants`);
    await page.getByLabel('E-mail').fill(world.login.user);
    await page.getByLabel('Password').fill(world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Merchants' }).waitFor();
    await page.getByRole('cell', { name: 'Alpha 0' }).waitFor();
    assert.equal(await page.getByRole('cell', { name: 'Active' }).count(), 2);
    await noSeriousViolations('merchants');
  });

  it('adds a merchant: the identifier follows the country, and refusals show beside their fields', async () => {
    await page.getByRole('link', { name: 'Add merchant' }).click();
    await page.getByRole('heading', { name: 'Add a merchant' }).waitFor();
    await page.getByLabel('CUIT').waitFor();
    await page.getByLabel('Country').selectOption('MEX');
    await page.getByLabel('RFC').waitFor();
    assert.equal(await page.getByLabel('CUIT').count(), 0, 'a Mexican merchant has no CUIT');
    await page.getByLabel('Country').selectOption('ARG');
    await noSeriousViolations('add merchant');

    await page.getByLabel('Business (legal) name').fill('Cafetería La Plata S.A.');
    await page.getByLabel('Trading name').fill('Café 7');
    await page.getByLabel('CUIT').fill('30-71234567-2');
    await page.getByLabel('Merchant code').fill('LP-0001');
    await page.getByLabel('Street').fill('Calle 7');
    await page.getByRole('textbox', { name: /^Number/ }).fill('1234');
    await page.getByLabel('City').fill('La Plata');
    await page.getByLabel('Province').fill('Buenos Aires');
    // The postal code left empty: the schema names it first; then the service names the CUIT.
    await page.getByRole('button', { name: 'Add merchant' }).click();
    const zipError = page.locator('#field-address-zip-error');
    await zipError.waitFor();
    assert.match(await zipError.innerText(), /must not be empty/);
    assert.equal(await page.getByLabel('Postal code').getAttribute('aria-invalid'), 'true');

    await page.getByLabel('Postal code').fill('B1900');
    await page.getByRole('button', { name: 'Add merchant' }).click();
    const cuitError = page.locator('#field-tax_identification-number-error');
    await cuitError.waitFor();
    assert.match(await cuitError.innerText(), /not a valid CUIT/);
    assert.equal(await zipError.count(), 0, 'the fixed field is no longer marked');
    await shot('add-merchant-refused');
    await noSeriousViolations('add merchant, refused');

    await page.getByLabel('CUIT').fill('30-71234567-1');
    await page.getByRole('button', { name: 'Add merchant' }).click();
    await page.getByRole('heading', { name: /Café 7/ }).waitFor();
    merchantId = new URL(page.url()).pathname.split('/').at(-1) ?? '';
    const details = await page.getByTestId('merchant-details').innerText();
    assert.match(details, /30712345671/);
    assert.match(details, /LP-0001/);
    await shot('merchant-details');
    await noSeriousViolations('merchant details');
  });

  it('edits the merchant; a taken code is refused beside its field', async () => {
    await app.inject({
      method: 'POST',
      url: '/v1/merchants',
      headers: { authorization: `Bearer ${(await login()).access_token}` },
      payload: {
        customer_id: world.customerId,
        country: 'MEX',
        legal_type: 'NATURAL_PERSON',
        business_name: 'Eduardo González',
        fantasy_name: 'Tacos Lalo',
        merchant_code: 'TAKEN',
        address: { state: 'CDMX', city: 'Ciudad de México', zip: '06700', street: 'Obregón', number: '12' },
        tax_identification: { type: 'RFC', number: 'GODE561231GR8' },
      },
    });
    await page.getByRole('button', { name: 'Edit merchant' }).click();
    await page.getByRole('form', { name: 'Edit merchant' }).waitFor();
    await page.getByLabel('Merchant code').fill('TAKEN');
    await page.getByLabel('Trading name').fill('Café 7 Centro');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const codeError = page.locator('#field-merchant_code-error');
    await codeError.waitFor();
    assert.match(await codeError.innerText(), /already has this merchant_code/);
    await shot('edit-merchant-refused');
    await noSeriousViolations('edit merchant, refused');
    await page.getByLabel('Merchant code').fill('LP-0002');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: /Café 7 Centro/ }).waitFor();
    const saved = await app.inject({
      method: 'GET',
      url: `/v1/merchants/${merchantId}`,
      headers: { authorization: `Bearer ${(await login()).access_token}` },
    });
    assert.equal(saved.json().merchant_code, 'LP-0002');
    assert.equal(saved.json().name, 'Café 7 Centro');
  });

  it('deactivates after a confirmation: the merchant key is refused; reactivates it again', async () => {
    merchantKey = (await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId })).api_key;
    assert.equal((await me()).status, 200);
    await page.getByRole('button', { name: 'Deactivate' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deactivate this merchant?' });
    await dialog.waitFor();
    await shot('deactivate-dialog');
    await noSeriousViolations('deactivate dialog');
    await dialog.getByRole('button', { name: 'Deactivate merchant' }).click();
    await page.getByRole('button', { name: 'Reactivate' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: /Inactive/ }).count(), 1);
    assert.equal((await me()).status, 403, 'its key is refused');
    await shot('merchant-inactive');
    await noSeriousViolations('inactive merchant');

    await page.getByRole('button', { name: 'Reactivate' }).click();
    await page
      .getByRole('dialog', { name: 'Reactivate this merchant?' })
      .getByRole('button', { name: 'Reactivate merchant' })
      .click();
    await page.getByRole('button', { name: 'Deactivate' }).waitFor();
    assert.equal((await me()).status, 200, 'its key works again');
  });

  it('shows the status in the listing, and no browser errors', async () => {
    await page.getByRole('link', { name: 'Merchants', exact: true }).first().click();
    await page.getByRole('cell', { name: 'Café 7 Centro' }).waitFor();
    await shot('merchants-list');
    assert.deepEqual(browserErrors, []);
  });

  async function login() {
    const res = await app.inject({ method: 'POST', url: '/v1/login', payload: world.login });
    return res.json().token as { access_token: string };
  }
});
