/**
 * The console's Webhooks page end to end: the real service delivering to a
 * receiver on 127.0.0.1 that the test starts, driven in headless Chromium.
 * Subscribe (the secret rule refused, then kept), send a test event, see the
 * delivery with its status code and error, retry it, disable, delete; axe on
 * every state, screenshots in .tmp/. Each test has its own page and starts from
 * the subscriptions it makes through the API, so any one runs alone.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { testConfig } from '../../src/config.js';
import { newConsolePage, openConsole } from '../helpers/console-session.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import type { TestDatabase } from '../helpers/database.js';
import { loginAs, seedWorld, type World } from '../helpers/fixtures.js';
import { deliveringTo, type Receiver, startReceiver, subscribe, webhookRequest } from '../helpers/webhooks.js';

const SHOTS = '.tmp/console-webhooks';

describe('console: webhooks', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let receiver: Receiver;
  let browser: Browser;
  let world: World;
  let token: string;
  const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  const noSeriousViolations = async (page: Page, where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    receiver = await startReceiver();
    let first: Page;
    ({
      database,
      app,
      base,
      browser,
      page: first,
    } = await openConsole([], testConfig(deliveringTo(receiver, { webhookRetrySchedule: [] }))));
    await first.context().close();
    world = await seedWorld(app);
    token = (await loginAs(app, world.login)).access_token;
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
    await database?.drop();
  });

  /** No subscription of the customer's left, then `count` made through the API. */
  async function startWith(count: number): Promise<void> {
    const listed = await webhookRequest(app, { token }, 'GET', '/v1/webhooks');
    for (const { id } of listed.json().data as Array<{ id: string }>)
      assert.equal((await webhookRequest(app, { token }, 'DELETE', `/v1/webhooks/${id}`)).statusCode, 204);
    for (let i = 0; i < count; i++) await subscribe(app, { token }, receiver.url, ['API_KEY_REVOKED']);
  }

  /** A signed-in page of its own on the Webhooks page, closed after the test; the test checks its script errors. */
  async function webhooksPage(t: { after(fn: () => Promise<void>): void }): Promise<{ page: Page; errors: string[] }> {
    const errors: string[] = [];
    const page = await newConsolePage(browser, errors);
    t.after(() => page.context().close());
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').fill(world.login.user);
    await page.getByLabel('Password').fill(world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    return { page, errors };
  }

  it('subscribes a URL, showing the secret rule and refusing a secret that breaks it', async (t) => {
    await startWith(0);
    const { page, errors } = await webhooksPage(t);
    await page.getByText('No webhooks yet').waitFor();
    await noSeriousViolations(page, 'webhooks, empty');
    await page.getByText('Add a webhook').click();
    await page.getByText(/an upper-case letter and a character that is neither a letter nor a digit/).waitFor();
    await page.getByLabel('URL (https://)').fill(receiver.url);
    await page.getByLabel('Signing secret').fill('lowercase-only-1');
    await page.getByLabel('API_KEY_REVOKED').check();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /secret_key|upper-case/);
    await shot(page, 'create-refused');
    await page.getByLabel('Signing secret').fill('Whsec-Console-1');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('cell', { name: receiver.url }).waitFor();
    // The count under a listing agrees with its number (ui.tsx, Pager).
    await page.getByText('1 webhook', { exact: true }).waitFor({ timeout: 2000 });
    await noSeriousViolations(page, 'webhooks, one subscription');
    await shot(page, 'listed');
    assert.deepEqual(errors, []);
  });

  it('sends a test event and shows the delivery with its status code and error, then retries it', async (t) => {
    await startWith(1);
    receiver.respond((_got, response) => response.writeHead(500).end());
    const before = receiver.received.length;
    const { page, errors } = await webhooksPage(t);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/A test event is on its way/).waitFor();
    await receiver.waitFor(before + 1);
    await page.getByRole('button', { name: 'Deliveries' }).click();
    const section = page.getByRole('region', { name: /Deliveries to/ });
    await section.getByRole('cell', { name: 'WEBHOOK_TEST' }).waitFor();
    for (let i = 0; i < 50 && !(await section.getByText('the receiver answered 500').count()); i++) {
      await page.waitForTimeout(100);
      await section.getByRole('button', { name: 'Refresh' }).click();
    }
    await section.getByText('the receiver answered 500').waitFor();
    await section.getByRole('cell', { name: 'FAILED' }).waitFor();
    await noSeriousViolations(page, 'deliveries');
    await shot(page, 'deliveries-failed');

    receiver.respond((_got, response) => response.writeHead(204).end());
    await section.getByRole('button', { name: 'Retry now' }).click();
    await receiver.waitFor(before + 2);
    for (let i = 0; i < 50 && !(await section.getByRole('cell', { name: 'SUCCEEDED' }).count()); i++) {
      await page.waitForTimeout(100);
      await section.getByRole('button', { name: 'Refresh' }).click();
    }
    await section.getByRole('cell', { name: 'SUCCEEDED' }).waitFor();
    await shot(page, 'deliveries-retried');
    assert.deepEqual(errors, []);
  });

  it('disables, enables and deletes the subscription after a confirmation', async (t) => {
    await startWith(1);
    const { page, errors } = await webhooksPage(t);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('cell', { name: 'DISABLED' }).waitFor();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('cell', { name: 'ENABLED' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this webhook?' });
    await dialog.waitFor();
    await noSeriousViolations(page, 'delete dialog');
    await shot(page, 'delete-dialog');
    await dialog.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByText('No webhooks yet').waitFor();
    assert.deepEqual(errors, []);
  });

  it('fits a phone screen', async (t) => {
    await startWith(1);
    const { page, errors } = await webhooksPage(t);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByText('Add a webhook').waitFor();
    await noSeriousViolations(page, 'webhooks on a phone');
    await shot(page, 'mobile');
    assert.deepEqual(errors, []);
  });
});
