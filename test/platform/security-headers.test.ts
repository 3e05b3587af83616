/**
 * Security headers (docs/production.md#headers): nosniff on every answer,
 * no-store on every answer to an authenticated request or carrying a secret, no
 * banner; the docs and the console still work in a browser under the
 * Content-Security-Policy.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createKey, rollKey } from '../helpers/api-keys.js';
import { bearer, json, useTestApp, type Injected } from '../helpers/app.js';
import { CHROMIUM_MISSING, buildConsoleIfStale, launchChromium, newPage } from '../helpers/console-browser.js';
import { customerSession, issueKey, loginAs } from '../helpers/fixtures.js';

const h = useTestApp();

function assertBaseline(res: Injected, what: string): void {
  assert.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
  assert.equal(res.headers['x-powered-by'], undefined, `${what}: no X-Powered-By`);
  assert.equal(res.headers.server, undefined, `${what}: no Server banner`);
}

describe('security headers', () => {
  it('nosniff and no banner on every kind of answer, with a Content-Security-Policy', async () => {
    const app = await h.app();
    const answers: Record<string, Injected> = {
      health: await app.inject({ url: '/health' }),
      document: await app.inject({ url: '/v1/openapi.json' }),
      docs: await app.inject({ url: '/docs' }),
      'not found': await app.inject({ url: '/nothing' }),
      'method not allowed': await app.inject({ method: 'DELETE', url: '/health' }),
      unauthenticated: await app.inject({ url: '/v1/users/me' }),
      'malformed JSON': await app.inject({
        method: 'POST',
        url: '/v1/login',
        headers: { 'content-type': 'application/json' },
        payload: '{',
      }),
      'path parameter too long': await app.inject({ method: 'DELETE', url: `/v1/api-keys/${'a'.repeat(200)}` }),
    };
    for (const [what, res] of Object.entries(answers)) assertBaseline(res, what);
    assert.equal(answers.docs!.statusCode, 200);
    assert.match(String(answers.health!.headers['content-security-policy']), /default-src 'self'.*script-src 'self'/);
  });

  it("allows inline styles on the documentation's pages alone, however a console path is spelt", async () => {
    await buildConsoleIfStale();
    const app = await h.app();
    const policyOf = async (url: string) => String((await app.inject({ url })).headers['content-security-policy']);
    for (const url of ['/docs', '/docs/static/index.html'])
      assert.match(await policyOf(url), /style-src 'self' 'unsafe-inline'/, url);
    for (const url of ['/console/', '/%63onsole/', '/%63onsole/keys', '/health', '/v1/openapi.json', '/nothing'])
      assert.match(await policyOf(url), /style-src 'self'(;|$)/, url);
  });

  it('no-store on answers to authenticated requests, by token or key, successful or not', async () => {
    const { app, world, token } = await customerSession(h);
    const key = (await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId })).api_key;
    const answers: Record<string, Injected> = {
      'by token': await app.inject({ url: '/v1/merchants', headers: bearer(token) }),
      'by key': await app.inject({ url: '/v1/users/me', headers: { 'x-api-key': key } }),
      'a listing': await app.inject({ url: '/v1/payment-plans', headers: { 'x-api-key': key } }),
      'a bad key': await app.inject({ url: '/v1/users/me', headers: { 'x-api-key': `${key}x` } }),
    };
    for (const [what, res] of Object.entries(answers)) {
      assertBaseline(res, what);
      assert.equal(res.headers['cache-control'], 'no-store', `${what}: no-store`);
    }
    assert.equal(answers['by token']!.statusCode, 200);
    assert.equal(answers['by key']!.statusCode, 200);
  });

  it('no-store on every answer carrying a secret: login, refresh, a created or rolled key', async () => {
    const { app, world, token } = await customerSession(h);
    const login = await app.inject({ method: 'POST', url: '/v1/login', payload: world.login });
    const refresh = await app.inject({
      method: 'POST',
      url: '/v1/login/refresh',
      payload: { refresh_token: json(login).token.refresh_token },
    });
    const created = await createKey(app, { token }, { user: 'new@alpha.test', customer_id: world.customerId });
    const rolled = await rollKey(app, { token }, json(created).id);
    for (const [what, res, status] of [
      ['login', login, 200],
      ['refresh', refresh, 200],
      ['created key', created, 201],
      ['rolled key', rolled, 201],
    ] as const) {
      assert.equal(res.statusCode, status, what);
      assertBaseline(res, what);
      assert.equal(res.headers['cache-control'], 'no-store', `${what}: no-store`);
    }
    assert.ok(await loginAs(app, world.login), 'logins still work');
  });

  it('keeps /docs and /console/ working in a browser under the policy', { skip: CHROMIUM_MISSING }, async () => {
    await buildConsoleIfStale();
    const app = await h.app();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const browser = await launchChromium();
    try {
      const page = await newPage(browser);
      const refused: string[] = [];
      page.on(
        'console',
        (message) => /Content.Security.Policy|Refused to/i.test(message.text()) && refused.push(message.text()),
      );
      page.on('pageerror', (error) => refused.push(error.message));

      const docs = await page.goto(`${base}/docs`);
      assert.ok(docs?.headers()['content-security-policy'], '/docs is served under the policy');
      await page.locator('.swagger-ui .info .title').waitFor();
      assert.match(await page.locator('.swagger-ui .info .title').innerText(), /feegate/);
      await page.locator('.opblock-summary-path', { hasText: '/v1/login' }).first().waitFor();

      const console = await page.goto(`${base}/console/`);
      const consolePolicy = console?.headers()['content-security-policy'] ?? '';
      assert.match(consolePolicy, /style-src 'self'(;|$)/, '/console/ is served under a policy with no inline style');
      assert.match(
        docs?.headers()['content-security-policy'] ?? '',
        /style-src 'self' 'unsafe-inline'/,
        'only /docs needs them',
      );
      await page.getByRole('heading', { name: 'Sign in to the back office' }).waitFor();
      assert.deepEqual(refused, [], 'nothing refused by the policy');
    } finally {
      await browser.close();
    }
  });
});
