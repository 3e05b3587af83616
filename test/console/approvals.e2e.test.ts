/**
 * Four-eyes approval in the console (contract section 23), end to end in
 * headless Chromium against the real service: under the REQUIRED policy an
 * ADMIN's /all from the Fee plans form is sent for approval and links to its
 * change request; a second ADMIN sees it pending on the Approvals page with its
 * preview table and counts, approves it (it applies), and rejects another with a
 * reason. axe on both pages; screenshots in /tmp.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import { newConsolePage, openConsole } from '../helpers/console-session.js';
import { getRequest, heldRequest, underApproval } from '../helpers/change-requests.js';
import { json } from '../helpers/app.js';
import type { TestDatabase } from '../helpers/database.js';
import { issueKey } from '../helpers/fixtures.js';
import { apiKey, bulkAssign, plansByMerchant } from '../helpers/plans.js';
import { STRONG } from '../helpers/users.js';

async function signIn(page: Page, base: string, user: string, password: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('E-mail').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
}

describe('console: approvals', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let maker: Page;
  let checker: Page;
  let world: Awaited<ReturnType<typeof underApproval>>;
  const browserErrors: string[] = [];

  before(async () => {
    ({ database, app, base, browser, page: maker } = await openConsole(browserErrors));
    world = await underApproval(app);
    await signIn(maker, base, world.world.login.user, world.world.login.password);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('an /all from the form is sent for approval; a second ADMIN reviews the preview and approves it', async () => {
    const { plans, m0, m1 } = world;
    await maker.getByRole('link', { name: 'Fee plans' }).click();
    await maker.getByRole('checkbox', { name: 'Select VISA CREDIT term 6 at 5.2375%' }).check();
    await maker.getByLabel('All merchants of the customer').check();
    await maker.getByRole('button', { name: 'Apply', exact: true }).click();
    const sent = maker.getByRole('status').filter({ hasText: 'Sent for approval' });
    await sent.getByRole('link', { name: 'Open the change request' }).click();
    // The requester's own view: pending, no approve button, only cancel.
    await maker.getByRole('heading', { name: /Assign plans to every merchant/ }).waitFor();
    await maker.getByRole('button', { name: 'Cancel the request' }).waitFor();
    assert.equal(await maker.getByRole('button', { name: 'Approve and apply' }).count(), 0);
    const id = maker.url().split('/approvals/')[1]!;
    const before = await plansByMerchant(database.database);
    assert.ok(!before.get(m0)!.includes(plans.visa6.id), 'nothing applied while pending');

    checker = await newConsolePage(browser, browserErrors);
    await signIn(checker, base, 'checker@alpha.test', STRONG);
    await checker.getByRole('link', { name: 'Approvals' }).click();
    const pending = checker.getByTestId('pending-requests');
    const row = pending.getByRole('row').filter({ hasText: 'Assign plans to every merchant' });
    await row.filter({ hasText: 'Merchants changed: 2 of 2; plans +2 / −1' }).waitFor();
    await row.filter({ hasText: world.world.login.user }).waitFor();
    assert.deepEqual(await seriousViolations(checker), [], 'axe on the Approvals page');
    await row.getByRole('link', { name: /^Review/ }).click();
    const preview = checker.getByRole('region', { name: 'Preview of the change' });
    await preview.waitFor();
    assert.equal(await preview.getByTestId('preview-merchants').textContent(), '2');
    assert.equal(await preview.getByTestId('preview-changed').textContent(), '2');
    assert.equal(await preview.getByTestId('preview-added').textContent(), '2');
    assert.equal(await preview.getByTestId('preview-removed').textContent(), '1');
    // The table names each merchant and the plans it gains and loses.
    assert.equal(await preview.getByRole('row').count(), 3);
    await preview
      .getByRole('row')
      .filter({ hasText: 'VISA CREDIT 6x 5.2375%' })
      .filter({ hasText: 'VISA CREDIT 3x 3.89%' })
      .waitFor();
    assert.deepEqual(await seriousViolations(checker), [], 'axe on a pending change request');
    await checker.screenshot({ path: '/tmp/approvals-review.png', fullPage: true });

    await checker.getByRole('button', { name: 'Approve and apply' }).click();
    await checker.getByRole('status').filter({ hasText: 'Approved and applied.' }).waitFor();
    await checker.getByRole('heading', { name: /Applied/ }).waitFor();
    await checker.getByRole('region', { name: 'What the change did' }).waitFor();
    const held = json(await getRequest(app, world.checker, id));
    assert.equal(held.status, 'APPLIED');
    assert.equal(held.reviewed_by.email, 'checker@alpha.test');
    const applied = await plansByMerchant(database.database);
    assert.ok(applied.get(m0)!.includes(plans.visa6.id) && !applied.get(m0)!.includes(plans.visa3.id));
    assert.ok(applied.get(m1)!.includes(plans.visa6.id));
  });

  it('rejects another, asked through an API key, with a reason, in a dialog that needs one', async () => {
    const key = await issueKey(app, { user: world.world.login.user, customerId: world.world.customerId });
    const other = heldRequest(
      await bulkAssign(app, apiKey(key.api_key), {
        merchant_ids: [world.m1],
        payment_plan_ids: [world.plans.master1.id],
      }),
    );
    const before = await plansByMerchant(database.database);
    await checker.getByRole('link', { name: 'Approvals', exact: true }).first().click();
    const row = checker
      .getByTestId('pending-requests')
      .getByRole('row')
      .filter({ hasText: 'Assign plans to merchants' });
    await row.getByRole('link', { name: /^Review/ }).click();
    await checker.getByRole('button', { name: 'Reject…' }).click();
    const dialog = checker.getByRole('dialog', { name: 'Reject this change' });
    const reason = dialog.getByLabel('Reason (the requester sees it)');
    assert.ok(await reason.evaluate((el) => el === document.activeElement), 'the dialog takes the focus');
    // Without a reason the browser refuses to submit: still pending.
    await dialog.getByRole('button', { name: 'Reject', exact: true }).click();
    assert.equal(json(await getRequest(app, world.checker, other.id)).status, 'PENDING');
    await reason.fill('MASTERCARD rates are not signed yet');
    await dialog.getByRole('button', { name: 'Reject', exact: true }).click();
    await checker.getByRole('status').filter({ hasText: 'Change request rejected.' }).waitFor();
    assert.equal(await checker.getByTestId('request-reason').textContent(), 'MASTERCARD rates are not signed yet');
    await checker.screenshot({ path: '/tmp/approvals-rejected.png', fullPage: true });
    const rejected = json(await getRequest(app, world.checker, other.id));
    assert.equal(rejected.status, 'REJECTED');
    assert.deepEqual(await plansByMerchant(database.database), before, 'a rejection changes no plan');

    await checker.getByRole('link', { name: 'Approvals', exact: true }).first().click();
    const decided = checker.getByTestId('decided-requests');
    // The key's request names the key and the user it belongs to.
    await decided
      .getByRole('row')
      .filter({ hasText: 'Rejected' })
      .filter({ hasText: `owner@alpha.test (API key ${other.requested_by.id.slice(0, 8)})` })
      .waitFor();
    await decided.getByRole('row').filter({ hasText: 'Applied' }).waitFor();
    await checker.getByText('No change waits for approval.').waitFor();
    await checker.screenshot({ path: '/tmp/approvals-list.png', fullPage: true });
    assert.deepEqual(browserErrors, []);
  });
});
