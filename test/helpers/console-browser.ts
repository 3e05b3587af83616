/**
 * What the console's browser tests and the screenshot script share: Debian's
 * Chromium driven by playwright-core, a console build that is never stale
 * (scripts/console-build.mjs), and the accessibility check. The console runs
 * under the service's own policy for /console, which allows no inline style
 * (src/plugins/security-headers.ts).
 */
import { existsSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
export { buildConsoleIfStale } from '../../scripts/console-build.mjs';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_MISSING = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (apt-get install -y chromium; .ci/run does it)`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * How long a page's waits last: Playwright's 30 s default was too short for swagger-ui
 * to render the whole OpenAPI document while both CI runs kept two cores at load 15
 * (about 2 s on a quiet machine); the test's own time-out still ends a wait that never will.
 */
const BROWSER_WAIT_MS = 120_000;

/** A page in a fresh browser context (no session, nothing stored) whose waits outlast a loaded CI machine. */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(BROWSER_WAIT_MS);
  return context.newPage();
}

/** Serious or critical accessibility violations on the page as it is now (an empty list is a pass). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`);
}
