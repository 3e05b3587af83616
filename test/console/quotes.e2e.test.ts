/**
 * The quote calculator on the console's merchant page, in headless Chromium
 * against the real service: a quote with exact half-to-even rounding, a
 * 3-installment plan, a refusal when no plan is in force, and a bad amount
 * refused by the service beside the form. Checked with axe; screenshots go to
 * /tmp/shots-i43/ (looked at by a person).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import { newConsolePage, openConsole } from '../helpers/console-session.js';
import type { TestDatabase } from '../helpers/database.js';
import { seedQuotePlans } from '../helpers/quotes.js';

const SHOTS = process.env.CONSOLE_SHOTS ?? '/tmp/shots-i43';

describe('console: the quote calculator', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let seeded: Awaited<ReturnType<typeof seedQuotePlans>>;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    let page: Page;
    ({ database, app, base, browser, page } = await openConsole([]));
    await page.context().close();
    seeded = await seedQuotePlans(app);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('quotes a transaction of the merchant, refuses one without a plan, and shows the service refusing a bad amount', async (t) => {
    const errors: string[] = [];
    const page = await newConsolePage(browser, errors);
    t.after(() => page.context().close());
    await page.goto(`${base}/console/merchants/${seeded.m0}`);
    await page.getByLabel('E-mail').fill(seeded.world.login.user);
    await page.getByLabel('Password').fill(seeded.world.login.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const form = page.getByRole('form', { name: 'Quote a transaction' });
    await form.waitFor();

    // 0.60 USD at 2.5% is 0.015: an exact half, to the even 0.02.
    await form.getByLabel('Amount').fill('0.60');
    await form.getByLabel('Currency').selectOption('USD');
    await form.getByRole('button', { name: 'Quote' }).click();
    await page.getByTestId('quote-fee').waitFor();
    assert.equal(await page.getByTestId('quote-fee').textContent(), '0.02 USD');
    assert.equal(await page.getByTestId('quote-net').textContent(), '0.58 USD');
    assert.deepEqual(await seriousViolations(page), [], 'axe on the quote');
    await page.screenshot({ path: `${SHOTS}/quote-half-even.png`, fullPage: true });

    // The 3-installment plan: 1234.56 ARS at 3.89% = 48.02.
    await form.getByLabel('Amount').fill('1234.56');
    await form.getByLabel('Currency').selectOption('ARS');
    await form.getByLabel('Installments').fill('3');
    await form.getByRole('button', { name: 'Quote' }).click();
    await page.getByText('48.02 ARS').waitFor();
    assert.equal(await page.getByTestId('quote-net').textContent(), '1186.54 ARS');
    await page.screenshot({ path: `${SHOTS}/quote-installments.png`, fullPage: true });

    // International: no such plan.
    await form.getByLabel('Installments').fill('1');
    await form.getByLabel('International').check();
    await form.getByRole('button', { name: 'Quote' }).click();
    await page.getByText('No plan in force matches this transaction').waitFor();
    assert.deepEqual(await seriousViolations(page), [], 'axe on a refusal');
    await page.screenshot({ path: `${SHOTS}/quote-no-plan.png`, fullPage: true });

    // Too many decimals for CLP: the service's 400, in words.
    await form.getByLabel('International').uncheck();
    await form.getByLabel('Amount').fill('1500.5');
    await form.getByLabel('Currency').selectOption('CLP');
    await form.getByRole('button', { name: 'Quote' }).click();
    await page.getByText(/no decimals in this currency/).waitFor();
    assert.deepEqual(await seriousViolations(page), [], 'axe on a refused amount');
    await page.screenshot({ path: `${SHOTS}/quote-bad-amount.png`, fullPage: true });
    assert.deepEqual(errors, []);
  });
});
