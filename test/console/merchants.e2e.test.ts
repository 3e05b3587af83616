/**
 * The console's merchant pages end to end, in headless Chromium against the real
 * service: add a merchant (the refusals of the service beside their fields, the
 * tax identifier following the country), its details, the edit form, and
 * deactivation and reactivation after a confirmation. Every page is checked
 * with axe; screenshots go to .tmp/. Each test opens a page of its own in a
 * fresh browser context, signs in and makes the merchants it changes, so that
 * any one runs alone or in any order.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { newConsolePage, openConsole } from '../helpers/console-session.js';
import type { TestDatabase } from '../helpers/database.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import { issueKey, seedWorld, type World } from '../helpers/fixtures.js';

const SHOTS = '.tmp/console-merchants';

describe('console: merchants in the browser', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let world: World;

  const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  const noSeriousViolations = async (page: Page, where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);
  const me = (key: string) => fetch(`${base}/v1/users/me`, { headers: { 'x-api-key': key } });

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const first: string[] = [];
    let page: Page;
    ({ database, app, base, browser, page } = await openConsole(first));
    await page.context().close();
    world = await seedWorld(app);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  /** A page of its own, closed after the test, whose script errors the test checks. */
  async function openPage(t: { after(fn: () => Promise<void>): void }): Promise<{ page: Page; errors: string[] }> {
    const errors: string[] = [];
    const page = await newConsolePage(browser, errors);
    t.after(() => page.context().close());
    return { page, errors };
  }

  async function signIn(page: Page, path = 'merchants'): Promise<void> {
    await page.goto(`${base}/console/${path}`);
    await page.getByLabel('E-mail').fill(world.login.user);
    await page.getByLabel('Password').fill(world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function login() {
    const res = await app.inject({ method: 'POST', url: '/v1/login', payload: world.login });
    return res.json().token as { access_token: string };
  }

  /** A merchant of the customer made through the API, for a test that changes it. */
  async function createMerchant(fields: { fantasy_name: string; merchant_code: string; rfc: string }) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/merchants',
      headers: { authorization: `Bearer ${(await login()).access_token}` },
      payload: {
        customer_id: world.customerId,
        country: 'MEX',
        legal_type: 'NATURAL_PERSON',
        business_name: 'Eduardo González',
        fantasy_name: fields.fantasy_name,
        merchant_code: fields.merchant_code,
        address: { state: 'CDMX', city: 'Ciudad de México', zip: '06700', street: 'Obregón', number: '12' },
        tax_identification: { type: 'RFC', number: fields.rfc },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  }

  it('signs in and lists the merchants with their status', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.getByRole('heading', { name: 'Merchants' }).waitFor();
    await page.getByRole('cell', { name: 'Alpha 0' }).waitFor();
    assert.ok((await page.getByRole('cell', { name: 'Active' }).count()) >= 2);
    await noSeriousViolations(page, 'merchants');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('adds a merchant: the identifier follows the country, and refusals show beside their fields', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.getByRole('link', { name: 'Add merchant' }).click();
    await page.getByRole('heading', { name: 'Add a merchant' }).waitFor();
    await page.getByLabel('CUIT').waitFor();
    await page.getByLabel('Country').selectOption('MEX');
    await page.getByLabel('RFC').waitFor();
    assert.equal(await page.getByLabel('CUIT').count(), 0, 'a Mexican merchant has no CUIT');
    await page.getByLabel('Country').selectOption('ARG');
    await noSeriousViolations(page, 'add merchant');

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

    await page.getByLabel('Postal code').fill('B1900AAA');
    await page.getByRole('button', { name: 'Add merchant' }).click();
    const cuitError = page.locator('#field-tax_identification-number-error');
    await cuitError.waitFor();
    assert.match(await cuitError.innerText(), /not a valid CUIT/);
    assert.equal(await zipError.count(), 0, 'the fixed field is no longer marked');
    await shot(page, 'add-merchant-refused');
    await noSeriousViolations(page, 'add merchant, refused');

    await page.getByLabel('CUIT').fill('30-71234567-1');
    await page.getByRole('button', { name: 'Add merchant' }).click();
    await page.getByRole('heading', { name: /Café 7/ }).waitFor();
    const details = await page.getByTestId('merchant-details').innerText();
    assert.match(details, /30712345671/);
    assert.match(details, /LP-0001/);
    await shot(page, 'merchant-details');
    await noSeriousViolations(page, 'merchant details');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it("adds a merchant with the platform's fields; a bad CBU is refused beside its field; all shown after a reload", async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.getByRole('link', { name: 'Add merchant' }).click();
    await page.getByRole('heading', { name: 'Add a merchant' }).waitFor();
    await page.getByLabel('Business (legal) name').fill('Panadería Sur S.R.L.');
    await page.getByLabel('Trading name').fill('Pan Sur');
    await page.getByLabel('CUIT').fill('30-71234567-1');
    await page.getByLabel('Tax condition').fill('RESPONSABLE_INSCRIPTO');
    await page.getByLabel('Merchant phone').fill('+54 221 555 0199');
    await page.getByLabel('Activity').fill('Panadería');
    await page.getByLabel('Category').fill('5462');
    await page.getByLabel('Transaction fee').fill('3.5');
    await page.getByLabel('Settlement term').fill('T+1');
    // The last check digit wrong: the service's check, not the form's, refuses it.
    await page.getByLabel('CBU or CVU').fill('2850590940090418135202');
    await page.getByLabel('Street').fill('Calle 8');
    await page.getByRole('textbox', { name: /^Number/ }).fill('800');
    await page.getByLabel('City').fill('La Plata');
    await page.getByLabel('Province').fill('Buenos Aires');
    await page.getByLabel('Postal code').fill('B1900AAB');
    await page.getByLabel('Given name').fill('Ana');
    await page.getByLabel('Surname').fill('García');
    await page.getByLabel('Document type').fill('DNI');
    await page.getByLabel('Document number').fill('26756539');
    await page.getByLabel('Date of birth').fill('1978-05-21');
    await page.getByLabel('Representative e-mail').fill('ana@pansur.example.com');
    await page.getByRole('textbox', { name: /^Phone/ }).fill('+54 221 555 0100');
    await page.getByRole('button', { name: 'Add merchant' }).click();
    const cbuError = page.locator('#field-settlement_condition-cbu_or_cvu-error');
    await cbuError.waitFor();
    assert.match(await cbuError.innerText(), /check digit/i);
    assert.equal(await page.getByLabel('CBU or CVU').getAttribute('aria-invalid'), 'true');
    await shot(page, 'add-merchant-bad-cbu');
    await noSeriousViolations(page, 'add merchant, bad CBU');

    await page.getByLabel('CBU or CVU').fill('285-0590940090418135201');
    await page.getByRole('button', { name: 'Add merchant' }).click();
    await page.getByRole('heading', { name: /Pan Sur/ }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: /Pan Sur/ }).waitFor();
    const details = await page.getByTestId('merchant-details').innerText();
    for (const shown of [
      /RESPONSABLE_INSCRIPTO/,
      /\+54 221 555 0199/,
      /Panadería/,
      /5462/,
      /3\.5, T\+1, CBU\/CVU 2850590940090418135201/,
      /DNI 26756539, born 1978-05-21/,
    ])
      assert.match(details, shown);
    await shot(page, 'merchant-platform-fields');
    await noSeriousViolations(page, 'merchant details with platform fields');
    await page.getByRole('button', { name: 'Edit merchant' }).click();
    await page.getByRole('form', { name: 'Edit merchant' }).waitFor();
    assert.equal(await page.getByLabel('CBU or CVU').inputValue(), '2850590940090418135201');
    assert.equal(await page.getByLabel('Date of birth').inputValue(), '1978-05-21');
    assert.equal(await page.getByLabel('Tax condition').inputValue(), 'RESPONSABLE_INSCRIPTO');
    await shot(page, 'edit-merchant-platform-fields');
    await noSeriousViolations(page, 'edit merchant with platform fields');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('edits a merchant; a taken code is refused beside its field', async (t) => {
    await createMerchant({ fantasy_name: 'Tacos Lalo', merchant_code: 'TAKEN', rfc: 'GODE561231GR8' });
    const merchantId = await createMerchant({ fantasy_name: 'Café 8', merchant_code: 'LP-0008', rfc: 'GODE561231GR8' });
    const { page, errors } = await openPage(t);
    await signIn(page, `merchants/${merchantId}`);
    await page.getByRole('button', { name: 'Edit merchant' }).click();
    await page.getByRole('form', { name: 'Edit merchant' }).waitFor();
    await page.getByLabel('Merchant code').fill('TAKEN');
    await page.getByLabel('Trading name').fill('Café 8 Centro');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const codeError = page.locator('#field-merchant_code-error');
    await codeError.waitFor();
    assert.match(await codeError.innerText(), /already has this merchant_code/);
    await shot(page, 'edit-merchant-refused');
    await noSeriousViolations(page, 'edit merchant, refused');
    await page.getByLabel('Merchant code').fill('LP-0002');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: /Café 8 Centro/ }).waitFor();
    const saved = await app.inject({
      method: 'GET',
      url: `/v1/merchants/${merchantId}`,
      headers: { authorization: `Bearer ${(await login()).access_token}` },
    });
    assert.equal(saved.json().merchant_code, 'LP-0002');
    assert.equal(saved.json().name, 'Café 8 Centro');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('deactivates after a confirmation: the merchant key is refused; reactivates it again', async (t) => {
    const merchantId = await createMerchant({ fantasy_name: 'Café 9', merchant_code: 'LP-0009', rfc: 'GODE561231GR8' });
    const merchantKey = (await issueKey(app, { user: 'pos@alpha.test', customerId: world.customerId, merchantId }))
      .api_key;
    assert.equal((await me(merchantKey)).status, 200);
    const { page, errors } = await openPage(t);
    await signIn(page, `merchants/${merchantId}`);
    await page.getByRole('button', { name: 'Deactivate' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deactivate this merchant?' });
    await dialog.waitFor();
    await shot(page, 'deactivate-dialog');
    await noSeriousViolations(page, 'deactivate dialog');
    await dialog.getByRole('button', { name: 'Deactivate merchant' }).click();
    await page.getByRole('button', { name: 'Reactivate' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: /Inactive/ }).count(), 1);
    assert.equal((await me(merchantKey)).status, 403, 'its key is refused');
    await shot(page, 'merchant-inactive');
    await noSeriousViolations(page, 'inactive merchant');

    await page.getByRole('button', { name: 'Reactivate' }).click();
    await page
      .getByRole('dialog', { name: 'Reactivate this merchant?' })
      .getByRole('button', { name: 'Reactivate merchant' })
      .click();
    await page.getByRole('button', { name: 'Deactivate' }).waitFor();
    assert.equal((await me(merchantKey)).status, 200, 'its key works again');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('shows the status in the listing', async (t) => {
    const merchantId = await createMerchant({
      fantasy_name: 'Café 10',
      merchant_code: 'LP-0010',
      rfc: 'GODE561231GR8',
    });
    const patched = await app.inject({
      method: 'PATCH',
      url: `/v1/merchants/${merchantId}`,
      headers: { authorization: `Bearer ${(await login()).access_token}` },
      payload: { status: 'INACTIVE' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const { page, errors } = await openPage(t);
    await signIn(page);
    const row = page.getByRole('row', { name: /Café 10/ });
    await row.getByRole('cell', { name: 'Inactive' }).waitFor();
    await shot(page, 'merchants-list');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });
});
