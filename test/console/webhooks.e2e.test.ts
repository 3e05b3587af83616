/**
 * The console's Webhooks page end to end: the real service delivering to a
 * receiver on 127.0.0.1 that the test starts, driven in headless Chromium.
 * Subscribe (the secret rule refused, then kept), send a test event, see the
 * delivery with its status code and error, retry it, disable, delete; axe on
 * every state, screenshots in .tmp/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { testConfig } from '../../src/config.js';
import { openConsole } from '../helpers/console-session.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import type { TestDatabase } from '../helpers/database.js';
import { seedWorld, type World } from '../helpers/fixtures.js';
import { deliveringTo, type Receiver, startReceiver } from '../helpers/webhooks.js';

const SHOTS = '.tmp/console-webhooks';

describe('console: webhooks', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  let world: World;
  const browserErrors: string[] = [];
  const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  const noSeriousViolations = async (where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    receiver = await startReceiver();
    receiver.respond((_got, response) => response.writeHead(500).end());
    let base: string;
    ({ database, app, base, browser, page } = await openConsole(
      browserErrors,
      testConfig(deliveringTo(receiver, { webhookRetrySchedule: [] })),
    ));
    world = await seedWorld(app);
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').fill(world.login.user);
    await page.getByLabel('Password').fill(world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
    await database?.drop();
  });

  it('subscribes a URL, showing the secret rule and refusing a secret that breaks it', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet').waitFor();
    await noSeriousViolations('webhooks, empty');
    await page.getByText('Add a webhook').click();
    await page.getByText(/an upper-case letter and a character that is neither a letter nor a digit/).waitFor();
    await page.getByLabel('URL (https://)').fill(receiver.url);
    await page.getByLabel('Signing secret').fill('lowercase-only-1');
    await page.getByLabel('API_KEY_REVOKED').check();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /secret_key|upper-case/);
    await shot('create-refused');
    await page.getByLabel('Signing secret').fill('Whsec-Console-1');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByRole('cell', { name: receiver.url }).waitFor();
    // The count under a listing agrees with its number (ui.tsx, Pager).
    await page.getByText('1 webhook', { exact: true }).waitFor({ timeout: 2000 });
    await noSeriousViolations('webhooks, one subscription');
    await shot('listed');
  });

  it('sends a test event and shows the delivery with its status code and error, then retries it', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/A test event is on its way/).waitFor();
    await receiver.waitFor(1);
    await page.getByRole('button', { name: 'Deliveries' }).click();
    const section = page.getByRole('region', { name: /Deliveries to/ });
    await section.getByRole('cell', { name: 'WEBHOOK_TEST' }).waitFor();
    for (let i = 0; i < 50 && !(await section.getByText('the receiver answered 500').count()); i++) {
      await page.waitForTimeout(100);
      await section.getByRole('button', { name: 'Refresh' }).click();
    }
    await section.getByText('the receiver answered 500').waitFor();
    await section.getByRole('cell', { name: 'FAILED' }).waitFor();
    await noSeriousViolations('deliveries');
    await shot('deliveries-failed');

    receiver.respond((_got, response) => response.writeHead(204).end());
    await section.getByRole('button', { name: 'Retry now' }).click();
    await receiver.waitFor(2);
    for (let i = 0; i < 50 && !(await section.getByRole('cell', { name: 'SUCCEEDED' }).count()); i++) {
      await page.waitForTimeout(100);
      await section.getByRole('button', { name: 'Refresh' }).click();
    }
    await section.getByRole('cell', { name: 'SUCCEEDED' }).waitFor();
    await shot('deliveries-retried');
  });

  it('disables, enables and deletes the subscription after a confirmation', async () => {
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('cell', { name: 'DISABLED' }).waitFor();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('cell', { name: 'ENABLED' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this webhook?' });
    await dialog.waitFor();
    await noSeriousViolations('delete dialog');
    await shot('delete-dialog');
    await dialog.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByText('No webhooks yet').waitFor();
    assert.deepEqual(browserErrors, []);
  });

  it('fits a phone screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByText('Add a webhook').waitFor();
    await noSeriousViolations('webhooks on a phone');
    await shot('mobile');
  });
});
