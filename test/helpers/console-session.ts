/**
 * A console browser test's world: a fresh database, the application serving the
 * console under its own strict policy on a loopback port, and one Chromium page whose
 * script errors are collected (answers of 4xx and 5xx are the tests' business).
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { type Config, testConfig } from '../../src/config.js';
import { buildConsoleIfStale, launchChromium, newPage } from './console-browser.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export interface ConsoleSession {
  database: TestDatabase;
  app: FastifyInstance;
  base: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

export async function openConsole(browserErrors: string[], config: Config = testConfig()): Promise<ConsoleSession> {
  await buildConsoleIfStale();
  const database = await createTestDatabase();
  const app = await buildApp({ config, database: database.database });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  const page = await newConsolePage(browser, browserErrors);
  return { database, app, base, browser, context: page.context(), page };
}

/** A page in a fresh browser context (no session, nothing stored) whose script errors go to `errors`. */
export async function newConsolePage(browser: Browser, errors: string[]): Promise<Page> {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  page.on(
    'console',
    (message) =>
      message.type() === 'error' && !/status of (4|5)\d\d/.test(message.text()) && errors.push(message.text()),
  );
  page.on('pageerror', (error) => errors.push(error.message));
  return page;
}
