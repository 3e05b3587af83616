/**
 * The console end to end: the real service (buildApp on a test database, real
 * HTTP on port 0) serving the built console under a strict CSP, driven in
 * headless Chromium; every page is checked with axe. Each test opens a page of
 * its own in a fresh browser context (no session, nothing stored) and makes the
 * data it changes, so that any one runs alone or in any order.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  CHROMIUM_MISSING,
  buildConsoleIfStale,
  launchChromium,
  seriousViolations,
} from '../helpers/console-browser.js';
import { newConsolePage } from '../helpers/console-session.js';
import { issueKey } from '../helpers/fixtures.js';
import { seedCatalogue, type Catalogue } from '../helpers/plans.js';

/** A page of its own, the script errors it raised, and the last bearer token it sent. */
interface TestPage {
  page: Page;
  errors: string[];
  accessToken(): string;
}

describe('console in the browser', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let seeded: Catalogue;

  const api = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init);
  const noSeriousViolations = async (page: Page, where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);

  /** A page of its own, closed after the test, whose script errors and bearer token the test checks. */
  async function openPage(t: { after(fn: () => Promise<void>): void }): Promise<TestPage> {
    const errors: string[] = [];
    const page = await newConsolePage(browser, errors);
    t.after(() => page.context().close());
    let token = '';
    page.on('request', (request) => {
      const authorization = request.headers().authorization;
      if (authorization?.startsWith('Bearer ')) token = authorization.slice(7);
    });
    return { page, errors, accessToken: () => token };
  }

  /** Signs the customer's user in and waits for the first page. */
  async function signIn(page: Page): Promise<void> {
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').fill(seeded.world.login.user);
    await page.getByLabel('Password').fill(seeded.world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  }

  /** Waits until the page has no request in flight (its status line is gone). */
  const settled = (page: Page) =>
    page
      .getByRole('status')
      .waitFor({ state: 'detached' })
      .catch(() => {});

  before(async () => {
    await buildConsoleIfStale();
    database = await createTestDatabase();
    app = await buildApp({ config: testConfig(), database: database.database });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    seeded = await seedCatalogue(app);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('serves the console with immutable assets and a revalidated index', async () => {
    const index = await api('/console/');
    assert.equal(index.status, 200);
    assert.equal(index.headers.get('cache-control'), 'no-cache');
    const asset = (await index.text()).match(/src="(\/console\/assets\/[^"]+\.js)"/)?.[1];
    assert.ok(asset, 'index.html names a hashed script');
    assert.equal((await api(asset)).headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal((await api('/console/keys')).status, 200, 'a deep link answers index.html');
  });

  it('signs in with a customer user and password', async (t) => {
    const { page, errors } = await openPage(t);
    await page.goto(`${base}/console/`);
    await page.getByRole('heading', { name: 'Sign in to the back office' }).waitFor();
    await noSeriousViolations(page, 'sign-in');
    await page.getByLabel('E-mail').fill(seeded.world.login.user);
    await page.getByLabel('Password').fill('wrong-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /\S/, 'the problem detail is shown');
    await page.getByLabel('Password').fill(seeded.world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/keys');
    assert.equal(await page.evaluate(() => Object.keys(localStorage).length), 0, 'nothing in localStorage');
    await noSeriousViolations(page, 'API keys');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('creates a key and shows the full value once', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.getByText('Create a key').click();
    await page.getByLabel('Integration user (e-mail)').fill('checkout@alpha.test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const createdKey = (await page.getByTestId('new-key').innerText()).trim();
    assert.match(createdKey, /^fgk_[0-9A-Za-z]+$/);
    const me = await api('/v1/users/me', { headers: { 'x-api-key': createdKey } });
    assert.equal(me.status, 200, 'the shown key works');
    await noSeriousViolations(page, 'API keys with a new key');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('cell', { name: /checkout@alpha\.test/ }).waitFor();
    assert.equal((await page.content()).includes(createdKey), false, 'the full key is gone from the page');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('revokes a key after a confirmation', async (t) => {
    const key = await issueKey(app, { user: 'revoked@alpha.test', customerId: seeded.world.customerId });
    const { page, errors } = await openPage(t);
    await signIn(page);
    const row = page.getByRole('row', { name: /revoked@alpha\.test/ });
    await row.getByRole('button', { name: /^Revoke fgk_/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    await noSeriousViolations(page, 'revoke dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await api('/v1/users/me', { headers: { 'x-api-key': key.api_key } })).status, 401, 'refused');
    await page.getByRole('tab', { name: 'Deleted' }).click();
    await page.getByRole('cell', { name: /revoked@alpha\.test/ }).waitFor();
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('shows a 422 beside the conflicting plans', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.getByRole('link', { name: 'Fee plans' }).click();
    await page.getByRole('heading', { name: 'Fee plans' }).waitFor();
    await page.getByLabel('Select VISA CREDIT term 1 at 2.99%').check();
    await page.getByLabel('Select VISA CREDIT term 1 at 2.49%').check();
    await page.getByLabel('Alpha 1', { exact: true }).check();
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('.problem').waitFor();
    assert.equal(await page.locator('tr.refused').count(), 2, 'both conflicting plans are marked');
    await noSeriousViolations(page, 'fee plans with a refusal');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('searches merchants on the server, among all of them, not only the loaded page', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.getByRole('link', { name: 'Fee plans' }).click();
    const searched = page.waitForResponse((response) => /\/v1\/merchants\?.*q=alpha(%20|\+)1/i.test(response.url()));
    await page.getByLabel('Search merchants').fill('alpha 1');
    await searched;
    // While the answer is loading neither is shown; once rendered, only Alpha 1.
    await page.getByLabel('Alpha 1', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Alpha 0', { exact: true }).count(), 0);
    await page.getByLabel('Search merchants').fill('no such shop');
    await page.getByText('No merchant matches “no such shop”.').waitFor();
    await page.getByLabel('Search merchants').fill('');
    await page.getByLabel('Alpha 0', { exact: true }).waitFor();
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it("previews and applies a bulk assignment, and shows the merchant's plans before, after and at an earlier moment", async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.goto(`${base}/console/merchants/${seeded.m1}`);
    await page.getByTestId('current-plans').waitFor();
    await page.getByRole('heading', { name: 'Alpha 1', level: 1 }).waitFor();
    assert.equal((await page.getByTestId('current-plans').innerText()).includes('5.2375%'), false);
    await noSeriousViolations(page, 'merchant');

    await page.getByRole('link', { name: 'Fee plans' }).click();
    await page.getByLabel('Select VISA CREDIT term 6 at 5.2375%').check();
    await page.getByLabel('Alpha 1', { exact: true }).check();
    await page.getByRole('button', { name: 'Preview change' }).click();
    await page.getByRole('region', { name: 'Preview of the change' }).waitFor();
    assert.equal(await page.getByTestId('preview-merchants').innerText(), '1');
    assert.equal(await page.getByTestId('preview-changed').innerText(), '1');
    await noSeriousViolations(page, 'preview');
    const current = await api(`/v1/payment-plans?merchant_id=${seeded.m1}&is_selected=true`, {
      headers: seeded.headers as Record<string, string>,
    });
    assert.equal(
      JSON.stringify(await current.json()).includes(seeded.plans.visa6.id),
      false,
      'the preview changed nothing',
    );

    const beforeAssignment = new Date();
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the history picker has second resolution
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Assigned 1 plan to 1 merchant.').waitFor();
    await noSeriousViolations(page, 'fee plans applied');

    await page.goto(`${base}/console/merchants/${seeded.m1}`);
    await page.getByTestId('current-plans').getByText('5.2375%').waitFor();
    const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    await page.getByLabel('Date and time').fill(local(beforeAssignment));
    await page.getByRole('button', { name: 'Show plans' }).click();
    const history = page.getByTestId('history-plans');
    await history.waitFor();
    assert.equal((await history.innerText()).includes('5.2375%'), false, 'the plan was not held then');
    assert.ok((await history.innerText()).includes('2.99%'), 'the plans held then are listed');
    await noSeriousViolations(page, 'merchant history');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('shows the audit log', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByRole('table').waitFor();
    await noSeriousViolations(page, 'audit log');
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('works at 390 px wide without horizontal scrolling', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ['keys', 'fee-plans', `merchants/${seeded.m1}`]) {
      await page.goto(`${base}/console/${path}`);
      await page.locator('main h1').waitFor();
      await settled(page);
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, `${path} fits 390 px`);
      await noSeriousViolations(page, `${path} at 390 px`);
    }
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('returns to sign-in with a message when the session has ended', async (t) => {
    const { page, errors, accessToken } = await openPage(t);
    await signIn(page);
    // Let the page's own requests finish first, so none of them is the one that meets the ended session.
    await settled(page);
    assert.ok(accessToken(), 'the console sent a bearer token');
    assert.equal(
      (await api('/v1/logout', { method: 'POST', headers: { authorization: `Bearer ${accessToken()}` } })).status,
      204,
    );
    const ended = page.getByText('Your session has expired. Sign in again to continue.');
    // Should a late request of the keys page meet the ended session first, the console is already back at sign-in.
    if (!(await ended.isVisible())) await page.getByRole('link', { name: 'Merchants' }).click();
    await ended.waitFor();
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });

  it('signs out', async (t) => {
    const { page, errors, accessToken } = await openPage(t);
    await signIn(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'no refresh token left');
    assert.ok(accessToken(), 'the console sent a bearer token');
    assert.equal(
      (await api('/v1/users/me', { headers: { authorization: `Bearer ${accessToken()}` } })).status,
      401,
      'the token is revoked',
    );
    assert.deepEqual(errors, [], 'no script error or CSP violation in the browser');
  });
});
