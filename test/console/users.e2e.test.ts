/**
 * The console's users end to end in Chromium: an ADMIN adds a colleague (the
 * temporary password shown once), a colleague's first sign-in asks for a new
 * password, a user turns on two-factor codes with the QR code on My account (its
 * password asked first) and signs in again with a code; a VIEWER sees no buttons
 * it may not use. Each test has its own page and makes its own users through the
 * API, so any one runs alone. axe on every step, screenshots in .tmp/.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { totpCode } from '../../src/features/credentials/totp.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import { newConsolePage, openConsole } from '../helpers/console-session.js';
import type { TestDatabase } from '../helpers/database.js';
import { loginAs, seedWorld, type World } from '../helpers/fixtures.js';
import { createUser, STRONG, userWithRole } from '../helpers/users.js';

describe('console: users, first sign-in and two-factor codes', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let world: World;
  let admin: string;

  const noSeriousViolations = async (page: Page, where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);
  const shot = (page: Page, name: string) => page.screenshot({ path: `.tmp/users-${name}.png`, fullPage: true });

  before(async () => {
    await mkdir('.tmp', { recursive: true });
    let first: Page;
    ({ database, app, base, browser, page: first } = await openConsole([]));
    await first.context().close();
    world = await seedWorld(app);
    admin = (await loginAs(app, world.login)).access_token;
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  /** A page of its own, closed after the test; the test checks its script errors at the end. */
  async function openPage(t: { after(fn: () => Promise<void>): void }): Promise<{ page: Page; errors: string[] }> {
    const errors: string[] = [];
    const page = await newConsolePage(browser, errors);
    t.after(() => page.context().close());
    return { page, errors };
  }

  async function signIn(page: Page, user: string, password: string): Promise<void> {
    await page.goto(`${base}/console/`);
    await page.getByRole('heading', { name: 'Sign in to the back office' }).waitFor();
    await page.getByLabel('E-mail').fill(user);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the back office' }).waitFor();
  }

  it('lets an ADMIN add a user and shows the temporary password once', async (t) => {
    const { page, errors } = await openPage(t);
    await signIn(page, world.login.user, world.login.password);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByRole('cell', { name: world.login.user, exact: true }).waitFor();
    await noSeriousViolations(page, 'users');
    await page.getByRole('button', { name: 'Add user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a user' });
    await dialog.getByLabel('E-mail').fill('colleague@alpha.test');
    await dialog.getByLabel('Name (optional)').fill('Colleague');
    await dialog.getByLabel('Role').selectOption('MEMBER');
    await noSeriousViolations(page, 'add user dialog');
    await dialog.getByRole('button', { name: 'Add user' }).click();
    const temporaryPassword = (await page.getByTestId('revealed-secret').innerText()).trim();
    assert.match(temporaryPassword, /^[A-Za-z0-9_-]{20}$/);
    await page.getByRole('cell', { name: 'colleague@alpha.test', exact: true }).waitFor();
    await noSeriousViolations(page, 'users with a temporary password');
    await shot(page, 'added');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal((await page.content()).includes(temporaryPassword), false, 'the password is gone from the page');
    await page.getByRole('combobox', { name: 'Role of colleague@alpha.test' }).selectOption('VIEWER');
    await page.getByRole('combobox', { name: 'Role of colleague@alpha.test' }).waitFor();
    await signOut(page);
    assert.deepEqual(errors, []);
  });

  it('asks for a new password at the first sign-in', async (t) => {
    const { page, errors } = await openPage(t);
    const created = await createUser(app, admin, { email: 'newcomer@alpha.test', role: 'MEMBER' });
    await signIn(page, 'newcomer@alpha.test', created.temporary_password);
    await page.getByLabel('New password').waitFor();
    await noSeriousViolations(page, 'first sign-in');
    await page.getByLabel('New password').fill('password123456');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('alert').waitFor();
    await shot(page, 'first-sign-in-weak');
    await page.getByLabel('New password').fill(STRONG);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.deepEqual(errors, []);
  });

  it('shows a VIEWER no buttons it may not use', async (t) => {
    const { page, errors } = await openPage(t);
    await userWithRole(app, admin, 'viewer@alpha.test', 'VIEWER');
    await signIn(page, 'viewer@alpha.test', STRONG);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(await page.getByText('Create a key').count(), 0, 'no key creation on API keys');
    await page.getByRole('link', { name: 'Fee plans' }).click();
    await page.getByText('only reads').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Apply' }).count(), 0);
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('cell', { name: 'viewer@alpha.test', exact: true }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add user' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Disable/ }).count(), 0);
    assert.equal(await page.getByRole('combobox').count(), 0);
    await shot(page, 'viewer');
    assert.deepEqual(errors, []);
  });

  it('turns on two-factor codes on My account with a QR code, and the next sign-in asks for a code', async (t) => {
    const { page, errors } = await openPage(t);
    await userWithRole(app, admin, 'two-factor@alpha.test');
    await signIn(page, 'two-factor@alpha.test', STRONG);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('link', { name: 'My account' }).click();
    await page.getByRole('heading', { name: 'My account' }).waitFor();
    // A step-up: the password first; a wrong one is refused and the session goes on.
    await page.getByLabel('Your password, to set up two-factor codes').fill('not the password at all');
    await page.getByRole('button', { name: 'Set up two-factor codes' }).click();
    await page.getByText('The current password is not correct.').waitFor();
    await page.getByLabel('Your password, to set up two-factor codes').fill(STRONG);
    await page.getByRole('button', { name: 'Set up two-factor codes' }).click();
    await page.getByRole('img', { name: 'QR code of the two-factor secret' }).waitFor();
    const totpSecret = (await page.getByTestId('totp-secret').innerText()).trim();
    await noSeriousViolations(page, 'two-factor enrolment');
    await shot(page, 'enrol');
    await page.getByLabel('Code from the app').fill(totpCode(totpSecret));
    await page.getByRole('button', { name: 'Turn on two-factor codes' }).click();
    const codes = (await page.getByTestId('revealed-secret').innerText()).trim().split('\n');
    assert.equal(codes.length, 10);
    await shot(page, 'recovery-codes');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Turn off two-factor codes' }).waitFor();
    await shot(page, 'account-mfa-on');
    await signOut(page);
    await signIn(page, 'two-factor@alpha.test', STRONG);
    await page.getByLabel('Code from your authenticator app (or a recovery code)').fill(codes[0]!);
    await noSeriousViolations(page, 'two-factor sign-in');
    await shot(page, 'mfa-sign-in');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.deepEqual(errors, []);
  });
});
