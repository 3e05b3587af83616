/**
 * The console's users end to end in Chromium: an ADMIN adds a colleague (the
 * temporary password shown once), the colleague's first sign-in asks for a new
 * password, turns on two-factor codes with the QR code on My account (its password
 * asked first), and signs in
 * again with a code; a VIEWER sees no buttons it may not use. axe on every step,
 * screenshots in .tmp/.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { openConsole } from '../helpers/console-session.js';
import { totpCode } from '../../src/features/credentials/totp.js';
import { CHROMIUM_MISSING, seriousViolations } from '../helpers/console-browser.js';
import type { TestDatabase } from '../helpers/database.js';
import { seedWorld, type World } from '../helpers/fixtures.js';

const NEW_PASSWORD = 'mauve tractor juggles seven owls';

describe('console: users, first sign-in and two-factor codes', { skip: CHROMIUM_MISSING }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let world: World;
  let temporaryPassword = '';
  let totpSecret = '';
  const browserErrors: string[] = [];

  const noSeriousViolations = async (where: string) =>
    assert.deepEqual(await seriousViolations(page), [], `axe on ${where}`);
  const shot = (name: string) => page.screenshot({ path: `.tmp/users-${name}.png`, fullPage: true });
  const signIn = async (user: string, password: string) => {
    await page.goto(`${base}/console/`);
    await page.getByRole('heading', { name: 'Sign in to the back office' }).waitFor();
    await page.getByLabel('E-mail').fill(user);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the back office' }).waitFor();
  };

  before(async () => {
    await mkdir('.tmp', { recursive: true });
    ({ database, app, base, browser, page } = await openConsole(browserErrors));
    world = await seedWorld(app);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('lets an ADMIN add a user and shows the temporary password once', async () => {
    await signIn(world.login.user, world.login.password);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByRole('cell', { name: world.login.user, exact: true }).waitFor();
    await noSeriousViolations('users');
    await page.getByRole('button', { name: 'Add user' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a user' });
    await dialog.getByLabel('E-mail').fill('colleague@alpha.test');
    await dialog.getByLabel('Name (optional)').fill('Colleague');
    await dialog.getByLabel('Role').selectOption('MEMBER');
    await noSeriousViolations('add user dialog');
    await dialog.getByRole('button', { name: 'Add user' }).click();
    temporaryPassword = (await page.getByTestId('revealed-secret').innerText()).trim();
    assert.match(temporaryPassword, /^[A-Za-z0-9_-]{20}$/);
    await page.getByRole('cell', { name: 'colleague@alpha.test', exact: true }).waitFor();
    await noSeriousViolations('users with a temporary password');
    await shot('added');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal((await page.content()).includes(temporaryPassword), false, 'the password is gone from the page');
    await page.getByRole('combobox', { name: 'Role of colleague@alpha.test' }).selectOption('VIEWER');
    await page.getByRole('combobox', { name: 'Role of colleague@alpha.test' }).waitFor();
    await signOut();
  });

  it('asks for a new password at the first sign-in', async () => {
    await signIn('colleague@alpha.test', temporaryPassword);
    await page.getByLabel('New password').waitFor();
    await noSeriousViolations('first sign-in');
    await page.getByLabel('New password').fill('password123456');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('alert').waitFor();
    await shot('first-sign-in-weak');
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  });

  it('shows a VIEWER no buttons it may not use', async () => {
    assert.equal(await page.getByText('Create a key').count(), 0, 'no key creation on API keys');
    await page.getByRole('link', { name: 'Fee plans' }).click();
    await page.getByText('only reads').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Apply' }).count(), 0);
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('cell', { name: 'colleague@alpha.test', exact: true }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add user' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Disable/ }).count(), 0);
    assert.equal(await page.getByRole('combobox').count(), 0);
    await shot('viewer');
  });

  it('turns on two-factor codes on My account with a QR code, and the next sign-in asks for a code', async () => {
    await page.getByRole('link', { name: 'My account' }).click();
    await page.getByRole('heading', { name: 'My account' }).waitFor();
    // A step-up: the password first; a wrong one is refused and the session goes on.
    await page.getByLabel('Your password, to set up two-factor codes').fill('not the password at all');
    await page.getByRole('button', { name: 'Set up two-factor codes' }).click();
    await page.getByText('The current password is not correct.').waitFor();
    await page.getByLabel('Your password, to set up two-factor codes').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set up two-factor codes' }).click();
    await page.getByRole('img', { name: 'QR code of the two-factor secret' }).waitFor();
    totpSecret = (await page.getByTestId('totp-secret').innerText()).trim();
    await noSeriousViolations('two-factor enrolment');
    await shot('enrol');
    await page.getByLabel('Code from the app').fill(totpCode(totpSecret));
    await page.getByRole('button', { name: 'Turn on two-factor codes' }).click();
    const codes = (await page.getByTestId('revealed-secret').innerText()).trim().split('\n');
    assert.equal(codes.length, 10);
    await shot('recovery-codes');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Turn off two-factor codes' }).waitFor();
    await shot('account-mfa-on');
    await signOut();
    await signIn('colleague@alpha.test', NEW_PASSWORD);
    await page.getByLabel('Code from your authenticator app (or a recovery code)').fill(codes[0]!);
    await noSeriousViolations('two-factor sign-in');
    await shot('mfa-sign-in');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.deepEqual(browserErrors, []);
  });
});
