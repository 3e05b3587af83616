/**
 * What the console's browser tests and the screenshot script share: Debian's
 * Chromium driven by playwright-core, a console build that is never stale
 * (scripts/console-build.mjs), a Content-Security-Policy on /console stricter
 * than the service's (helmet's allows inline styles for swagger-ui; the console
 * must not need them), and the accessibility check.
 */
import { existsSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import type { FastifyInstance } from 'fastify';
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

export const STRICT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** Call before app.ready(): every /console response carries a strict CSP, so an inline script or style would fail. */
export function addStrictCsp(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    if (request.url.startsWith('/console')) reply.header('content-security-policy', STRICT_CSP);
  });
}

/** Serious or critical accessibility violations on the page as it is now (an empty list is a pass). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`);
}
