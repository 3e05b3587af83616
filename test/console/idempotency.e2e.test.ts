/**
 * The console's Idempotency-Key (contract section 21, docs/console.md) in
 * Chromium: the answer to a key creation is lost after the service made the key
 * (the connection fails on the way back, as behind a flaky proxy); the person
 * presses the button again and the console sends the same key, so the service
 * replays the one key it made. The next submission, even of the same form, is
 * new: a fresh key; a double click is one submission. Screenshots in /tmp/shots-i40/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { apiKeys } from '../../src/db/schema.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import { openConsole } from '../helpers/console-session.js';
import type { TestDatabase } from '../helpers/database.js';
import { seedWorld, type World } from '../helpers/fixtures.js';

const SHOTS = '/tmp/shots-i40';

describe('console: a retry after a lost answer acts once', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let world: World;
  const errors: string[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ({ database, app, base, browser, page } = await openConsole(errors));
    world = await seedWorld(app);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  const keyCount = async () => (await database.database.db.select({ n: count() }).from(apiKeys))[0]!.n;

  it('sends the same Idempotency-Key when the person retries, and a fresh one for the next submission', async () => {
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').fill(world.login.user);
    await page.getByLabel('Password').fill(world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    const sent: string[] = [];
    let lose = 1;
    await page.route('**/v1/api-keys', async (route) => {
      const request = route.request();
      if (request.method() !== 'POST') return route.continue();
      sent.push(request.headers()['idempotency-key'] ?? '');
      if (lose-- <= 0) return route.continue();
      // The service gets the request and acts; its answer never reaches the browser.
      const acted = await route.fetch();
      assert.equal(acted.status(), 201, 'the service made the key');
      return route.abort('connectionreset');
    });

    const before = await keyCount();
    await page.getByText('Create a key').click();
    await page.getByLabel('Integration user (e-mail)').fill('flaky-proxy@alpha.test');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /could not be reached/);
    await page.screenshot({ path: `${SHOTS}/lost-answer.png`, fullPage: true });
    assert.equal(await keyCount(), before + 1, 'the key was made although the browser never heard of it');

    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = (await page.getByTestId('new-key').innerText()).trim();
    assert.match(shown, /^fgk_[0-9A-Za-z]+$/);
    await page.screenshot({ path: `${SHOTS}/retried.png`, fullPage: true });
    assert.equal(sent.length, 2);
    assert.ok(sent[0], 'the first request carried a key');
    assert.equal(sent[1], sent[0], 'the retry carried the same Idempotency-Key');
    assert.equal(await keyCount(), before + 1, 'the retry made no second key');
    const me = await fetch(`${base}/v1/users/me`, { headers: { 'x-api-key': shown } });
    assert.equal(me.status, 200, 'the key shown is the one the service made');
    assert.deepEqual(await seriousViolations(page), [], 'axe on the key shown after the retry');

    // A new submission of the very same form, once the first succeeded: a new key, and a second key made.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    // The form stays open after a creation, emptied.
    await page.getByLabel('Integration user (e-mail)').fill('flaky-proxy@alpha.test');
    await page.getByRole('button', { name: 'Create key' }).click();
    assert.notEqual((await page.getByTestId('new-key').innerText()).trim(), shown);
    assert.equal(sent.length, 3);
    assert.notEqual(sent[2], sent[0], 'a fresh Idempotency-Key for a new submission');
    assert.equal(await keyCount(), before + 2);
    await page.screenshot({ path: `${SHOTS}/next-submission.png`, fullPage: true });

    // A double click is one submission: however many requests it sends, they carry one key and make one key.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByLabel('Integration user (e-mail)').fill('double-click@alpha.test');
    await page.getByRole('button', { name: 'Create key' }).dblclick();
    await page.getByTestId('new-key').waitFor();
    assert.equal(new Set(sent.slice(3)).size, 1, `one key for the double click: ${sent.slice(3).join(', ')}`);
    assert.notEqual(sent[3], sent[2]);
    assert.equal(await keyCount(), before + 3);
    assert.deepEqual(
      errors.filter((e) => !/ERR_CONNECTION_RESET|Failed to fetch/.test(e)),
      [],
    );
  });
});
