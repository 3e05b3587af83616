/**
 * The catalogue and one merchant's rules in the console, end to end in headless
 * Chromium against the real service: create a plan, retire it, assign plans to a
 * merchant now, schedule a change for later and cancel it. Every page checked
 * with axe; screenshots in .tmp/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { openConsole } from '../helpers/console-session.js';
import { merchantPaymentPlans, paymentPlans, scheduledFeeRuleChanges } from '../../src/db/schema.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import type { TestDatabase } from '../helpers/database.js';
import { type Catalogue, seedCatalogue } from '../helpers/plans.js';

const SHOTS = '.tmp';

/** A datetime-local value (the browser's local time) for `date`. */
function localInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

describe('console: catalogue and a merchant’s rules', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let seeded: Catalogue;
  const browserErrors: string[] = [];
  const db = () => database.database.db;
  const noSeriousViolations = async (where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ({ database, app, base, browser, page } = await openConsole(browserErrors));
    seeded = await seedCatalogue(app);
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').fill(seeded.world.login.user);
    await page.getByLabel('Password').fill(seeded.world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('creates a plan of the customer’s own and retires it', async () => {
    await page.getByRole('link', { name: 'Catalogue' }).click();
    await page.getByRole('heading', { name: 'Catalogue' }).waitFor();
    await page.getByTestId('catalogue').waitFor();
    await noSeriousViolations('catalogue');
    await page.getByText('Create a plan', { exact: true }).click();
    await page.getByLabel('Card brand').fill('elo');
    await page.getByLabel('Payment method').fill('CREDIT');
    await page.getByLabel('Term').fill('3');
    await page.getByLabel('Commission (%)').fill('2.75');
    await page.getByLabel('Installments').check();
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByRole('status').filter({ hasText: 'Created ELO CREDIT 3x 2.75%' }).waitFor();
    const retire = page.getByRole('button', { name: 'Retire ELO CREDIT 3x 2.75%' });
    await retire.waitFor();
    await page.screenshot({ path: `${SHOTS}/catalogue-desktop.png`, fullPage: true });
    const [created] = await db().select().from(paymentPlans).where(eq(paymentPlans.cardBrand, 'ELO'));
    assert.equal(created!.customerId, seeded.world.customerId);
    assert.equal(created!.status, 'ACTIVE');

    // The same plan again: the service's 409 is shown.
    await page.getByLabel('Card brand').fill('ELO');
    await page.getByLabel('Payment method').fill('CREDIT');
    await page.getByLabel('Term').fill('3');
    await page.getByLabel('Commission (%)').fill('2.75');
    await page.getByLabel('Installments').check();
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByRole('alert').filter({ hasText: created!.id }).waitFor();

    await retire.click();
    await page.getByRole('status').filter({ hasText: 'Plan retired' }).waitFor();
    const [retired] = await db().select().from(paymentPlans).where(eq(paymentPlans.id, created!.id));
    assert.equal(retired!.status, 'RETIRED');
    await page.getByLabel('Status').selectOption('RETIRED');
    await page.getByRole('cell', { name: 'ELO' }).waitFor();
    await noSeriousViolations('catalogue, retired');
  });

  it('assigns plans to one merchant now, schedules a change, lists it and cancels it', async () => {
    await page.goto(`${base}/console/merchants/${seeded.m0}`);
    await page.getByRole('heading', { name: 'Assign plans' }).waitFor();
    await page.getByText('No pending changes for this merchant.').waitFor();
    await page.getByLabel('VISA CREDIT 6x 5.2375%').check();
    await page.getByRole('button', { name: 'Assign' }).click();
    await page.getByRole('status').filter({ hasText: 'Assigned 1 plan' }).waitFor();
    const held = await db().select().from(merchantPaymentPlans).where(eq(merchantPaymentPlans.merchantId, seeded.m0));
    assert.ok(held.some((r) => r.paymentPlanId === seeded.plans.visa6.id));
    await page.getByTestId('current-plans').getByRole('cell', { name: '5.2375%' }).waitFor();

    const later = new Date(Date.now() + 3_600_000);
    later.setMilliseconds(0);
    await page.getByLabel('VISA CREDIT 3x 3.89%').check();
    await page.getByLabel('Schedule for… (empty: now)').fill(localInput(later));
    await page.getByRole('button', { name: 'Assign' }).click();
    await page.getByRole('status').filter({ hasText: 'Scheduled for' }).waitFor();
    await page.getByTestId('pending-changes').waitFor();
    // The BULK change of this test: another test's ALL change may be in the table too.
    const [scheduled] = await db()
      .select()
      .from(scheduledFeeRuleChanges)
      .where(eq(scheduledFeeRuleChanges.kind, 'BULK'));
    assert.equal(scheduled!.effectiveAt.toISOString(), later.toISOString());
    assert.deepEqual(scheduled!.merchantIds, [seeded.m0]);
    await noSeriousViolations('merchant with a pending change');
    await page.screenshot({ path: `${SHOTS}/merchant-schedule-desktop.png`, fullPage: true });

    await page.getByRole('button', { name: /^Cancel the change for/ }).click();
    await page.getByRole('status').filter({ hasText: 'Cancelled the change' }).waitFor();
    await page.getByText('No pending changes for this merchant.').waitFor();
    const [cancelled] = await db()
      .select()
      .from(scheduledFeeRuleChanges)
      .where(eq(scheduledFeeRuleChanges.id, scheduled!.id));
    assert.equal(cancelled!.status, 'CANCELLED');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/merchant-schedule-mobile.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('schedules an assignment to every merchant from the fee plans form, and cancels it', async () => {
    await page.getByRole('link', { name: 'Fee plans' }).click();
    await page.getByRole('heading', { name: 'Fee plans' }).waitFor();
    await page.getByText('No pending changes.').waitFor();
    await page.getByLabel('Select VISA CREDIT term 6 at 5.2375%').check();
    await page.getByLabel('All merchants of the customer').check();
    const later = new Date(Date.now() + 7_200_000);
    later.setMilliseconds(0);
    await page.getByLabel('Schedule for… (empty: now)').fill(localInput(later));
    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Scheduled for' }).waitFor();
    await page.getByTestId('pending-changes').getByRole('cell', { name: 'All' }).waitFor();
    const all = (await db().select().from(scheduledFeeRuleChanges)).filter((c) => c.kind === 'ALL');
    assert.equal(all.length, 1);
    assert.equal(all[0]!.effectiveAt.toISOString(), later.toISOString());
    await noSeriousViolations('fee plans with a pending change');
    await page.screenshot({ path: `${SHOTS}/fee-plans-schedule-desktop.png`, fullPage: true });
    await page.getByRole('button', { name: /^Cancel the change for/ }).click();
    await page.getByText('No pending changes.').waitFor();
    const [cancelled] = await db()
      .select()
      .from(scheduledFeeRuleChanges)
      .where(eq(scheduledFeeRuleChanges.id, all[0]!.id));
    assert.equal(cancelled!.status, 'CANCELLED');
  });

  it('raised no errors in the browser', () => {
    assert.deepEqual(browserErrors, []);
  });
});
