/**
 * Webhook subscriptions through the API: create, list, read, change, delete;
 * the secret rule and the URL rules (no private networks), at most 20 per
 * customer, the secret never answered or audited, and other customers'
 * subscriptions invisible. No delivery runs here (the worker is off), so no
 * packet leaves the process.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { auditEvents, webhookSubscriptions } from '../../src/db/schema.js';
import { json, useTestApp } from '../helpers/app.js';
import { customerSession, issueKey } from '../helpers/fixtures.js';
import { createWebhook, SECRET, subscribe, webhookRequest, webhooksSnapshot } from '../helpers/webhooks.js';
import { testSealedValues } from '../helpers/secrets.js';

const h = useTestApp();
const URL_OK = 'https://hooks.example.com/feegate';
const body = (overrides: object = {}) => ({
  notification_url: URL_OK,
  notification_type: ['API_KEY_REVOKED'],
  secret_key: SECRET,
  ...overrides,
});

describe('webhook subscriptions', () => {
  it('creates one (201, ENABLED, no secret), reads, lists, changes and deletes it, each audited without the secret', async () => {
    const { app, world, token } = await customerSession(h);
    const created = await createWebhook(
      app,
      { token },
      body({ notification_type: ['API_KEY_REVOKED', 'OPERATION_CREATED'] }),
    );
    assert.equal(created.statusCode, 201);
    const hook = json(created);
    assert.equal(hook.status, 'ENABLED');
    assert.equal(hook.notification_url, URL_OK);
    assert.deepEqual(hook.notification_type, ['API_KEY_REVOKED', 'OPERATION_CREATED']);
    assert.match(hook.create_date, /Z$/);
    assert.equal('secret_key' in hook, false);

    const read = await webhookRequest(app, { token }, 'GET', `/v1/webhooks/${hook.id}`);
    assert.deepEqual(json(read), hook);
    const listed = json(await webhookRequest(app, { token }, 'GET', '/v1/webhooks'));
    assert.deepEqual(listed.data, [hook]);
    assert.equal(listed.page.total_elements, 1);

    const changed = await webhookRequest(app, { token }, 'PATCH', `/v1/webhooks/${hook.id}`, {
      status: 'DISABLED',
      secret_key: 'Rotated#Secret9',
      notification_type: ['FEE_RULES_ASSIGNED'],
    });
    assert.equal(changed.statusCode, 200);
    assert.equal(json(changed).status, 'DISABLED');
    assert.deepEqual(json(changed).notification_type, ['FEE_RULES_ASSIGNED']);
    const [row] = await h.db.current.database.db
      .select()
      .from(webhookSubscriptions)
      .where(eq(webhookSubscriptions.id, hook.id));
    // Stored encrypted, each bound to its column and row (docs/production.md, "Keys and secrets").
    const opened = (column: 'secret' | 'previous_secret', value: string | null) =>
      testSealedValues().open({ table: 'webhook_subscriptions', column, row: hook.id }, value);
    assert.equal(opened('secret', row!.secret), 'Rotated#Secret9');
    assert.equal(
      opened('previous_secret', row!.previousSecret),
      SECRET,
      'the old secret keeps signing beside the new one',
    );
    const overlap = row!.previousSecretExpiresAt!.getTime() - Date.now();
    assert.ok(overlap > 86_300_000 && overlap <= 86_400_000, `for 24 h (${overlap} ms)`);

    const deleted = await webhookRequest(app, { token }, 'DELETE', `/v1/webhooks/${hook.id}`);
    assert.equal(deleted.statusCode, 204);
    assert.equal((await webhookRequest(app, { token }, 'GET', `/v1/webhooks/${hook.id}`)).statusCode, 404);
    assert.equal((await webhookRequest(app, { token }, 'DELETE', `/v1/webhooks/${hook.id}`)).statusCode, 404);

    const trail = await h.db.current.database.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.customerId, world.customerId))
      .orderBy(auditEvents.id);
    assert.deepEqual(
      trail.filter((a) => a.action.startsWith('webhook.')).map((a) => a.action),
      ['webhook.created', 'webhook.updated', 'webhook.deleted'],
    );
    const text = JSON.stringify(trail);
    assert.ok(!text.includes(SECRET) && !text.includes('Rotated#Secret9'), 'no secret in the audit trail');
    assert.ok(text.includes('secret_key_changed'));
  });

  it('refuses a secret without an upper-case letter, without a symbol, or shorter than 8, and writes nothing', async () => {
    const { app, token } = await customerSession(h);
    const before = await webhooksSnapshot(h.db.current.database);
    for (const secret of ['whsec-alpha-2026', 'WhsecAlpha2026', 'Ab-1234', 'Ab\u0000-12345', '']) {
      const response = await createWebhook(app, { token }, body({ secret_key: secret }));
      assert.equal(response.statusCode, 400, secret);
      assert.equal(json(response).code, 'validation_failed');
      assert.equal(json(response).errors[0].field, 'secret_key');
      assert.ok(!response.body.includes(secret) || secret === '', 'the refused secret is not echoed');
    }
    assert.equal(await webhooksSnapshot(h.db.current.database), before);
  });

  it('refuses URLs to loopback, private, link-local, unspecified, decimal and hex addresses and localhost (400 webhook_url_not_allowed)', async () => {
    const { app, token } = await customerSession(h);
    const before = await webhooksSnapshot(h.db.current.database);
    for (const url of [
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://api.localhost/hook',
      'https://[::1]/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://172.16.5.4/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://0.0.0.0/hook',
      'https://[::]/hook',
      'https://2130706433/hook',
      'https://0x7f000001/hook',
      'https://0x7f.1/hook',
      'https://017700000001/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[fd00::1]/hook',
      'https://[fe80::1]/hook',
      'https://224.0.0.1/hook',
      'https://100.64.0.1/hook',
      'http://hooks.example.com/plain-http',
      'ftp://hooks.example.com/file',
      'https://user:pass@hooks.example.com/hook',
    ]) {
      const response = await createWebhook(app, { token }, body({ notification_url: url }));
      assert.equal(response.statusCode, 400, url);
      assert.equal(json(response).code, 'webhook_url_not_allowed', url);
      assert.equal(json(response).errors[0].field, 'notification_url');
    }
    assert.equal(await webhooksSnapshot(h.db.current.database), before);
  });

  it('refuses a NUL in the URL, a 10,000-character URL and no URI (400 validation_failed), writing nothing', async () => {
    const { app, token } = await customerSession(h);
    const before = await webhooksSnapshot(h.db.current.database);
    // And a text that is no URI at all: the document states format uri (contract section 20).
    for (const url of [`${URL_OK}\u0000`, `${URL_OK}/${'a'.repeat(10_000)}`, 'not a url']) {
      const response = await createWebhook(app, { token }, body({ notification_url: url }));
      assert.equal(response.statusCode, 400);
      assert.equal(json(response).code, 'validation_failed');
      assert.equal(json(response).errors[0].field, 'notification_url');
    }
    assert.equal(await webhooksSnapshot(h.db.current.database), before);
  });

  it('takes http:// only with WEBHOOK_ALLOW_HTTP, and a private host only when WEBHOOK_ALLOWED_HOSTS names it', async () => {
    const { app, token } = await customerSession(h, {
      webhookAllowHttp: true,
      webhookAllowedHosts: ['hooks.internal', '10.0.0.5:8443'],
    });
    assert.equal(
      (await createWebhook(app, { token }, body({ notification_url: 'http://hooks.example.com/' }))).statusCode,
      201,
    );
    assert.equal(
      (await createWebhook(app, { token }, body({ notification_url: 'https://10.0.0.5:8443/' }))).statusCode,
      201,
    );
    const otherPort = await createWebhook(app, { token }, body({ notification_url: 'https://10.0.0.5:9443/' }));
    assert.equal(otherPort.statusCode, 400, 'host:port allows that port only');
    assert.equal(
      (await createWebhook(app, { token }, body({ notification_url: 'https://hooks.internal/x' }))).statusCode,
      201,
    );
  });

  it('refuses an unknown event type and an empty list', async () => {
    const { app, token } = await customerSession(h);
    for (const types of [['API_KEY_DELETED'], [], ['api_key_revoked']]) {
      const response = await createWebhook(app, { token }, body({ notification_type: types }));
      assert.equal(response.statusCode, 400, JSON.stringify(types));
    }
  });

  it('allows 20 subscriptions per customer: the 21st is 409 webhook_limit_reached, also when created at once', async () => {
    const { app, world, token } = await customerSession(h);
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => createWebhook(app, { token }, body({ notification_url: `${URL_OK}/${i}` }))),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 20);
    assert.ok(results.filter((r) => r.statusCode !== 201).every((r) => json(r).code === 'webhook_limit_reached'));
    const rows = await h.db.current.database.db
      .select()
      .from(webhookSubscriptions)
      .where(eq(webhookSubscriptions.customerId, world.customerId));
    assert.equal(rows.length, 20);
  });

  it("answers 404 for another customer's subscription in every operation, and changes nothing", async () => {
    const { app, world, token } = await customerSession(h);
    const other = await issueKey(app, { user: 'ops@beta.test', customerId: world.otherCustomerId });
    const theirs = await subscribe(app, { key: other.api_key }, URL_OK);
    const before = await webhooksSnapshot(h.db.current.database);
    const delivery = '4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
    for (const [method, url, payload] of [
      ['GET', `/v1/webhooks/${theirs}`],
      ['PATCH', `/v1/webhooks/${theirs}`, { status: 'DISABLED' }],
      ['DELETE', `/v1/webhooks/${theirs}`],
      ['POST', `/v1/webhooks/${theirs}/test`],
      ['GET', `/v1/webhooks/${theirs}/deliveries`],
      ['POST', `/v1/webhooks/${theirs}/deliveries/${delivery}/retry`],
    ] as const) {
      const response = await webhookRequest(app, { token }, method, url, payload);
      assert.equal(response.statusCode, 404, `${method} ${url}`);
      assert.equal(json(response).code, 'webhook_not_found');
    }
    assert.equal(json(await webhookRequest(app, { token }, 'GET', '/v1/webhooks')).page.total_elements, 0);
    assert.equal(await webhooksSnapshot(h.db.current.database), before);
  });

  it('answers 403 to a merchant key in every operation, and to a read_only key for changes', async () => {
    const { app, world, token } = await customerSession(h);
    const hook = await subscribe(app, { token }, URL_OK);
    const merchant = await issueKey(app, {
      user: 'pos@alpha.test',
      customerId: world.customerId,
      merchantId: world.merchantIds[0]!,
    });
    const readOnly = await issueKey(
      app,
      { user: 'ro@alpha.test', customerId: world.customerId },
      { access: 'read_only' },
    );
    const before = await webhooksSnapshot(h.db.current.database);
    for (const [method, url, payload] of [
      ['POST', '/v1/webhooks', body()],
      ['GET', '/v1/webhooks'],
      ['GET', `/v1/webhooks/${hook}`],
      ['PATCH', `/v1/webhooks/${hook}`, { status: 'DISABLED' }],
      ['DELETE', `/v1/webhooks/${hook}`],
      ['POST', `/v1/webhooks/${hook}/test`],
      ['POST', '/v1/webhooks/mock/send-payment-notification'],
      ['GET', `/v1/webhooks/${hook}/deliveries`],
    ] as const) {
      const response = await webhookRequest(app, { key: merchant.api_key }, method, url, payload);
      assert.equal(response.statusCode, 403, `merchant ${method} ${url}`);
      assert.equal(json(response).code, 'forbidden');
      const asReader = await webhookRequest(app, { key: readOnly.api_key }, method, url, payload);
      assert.equal(asReader.statusCode, method === 'GET' ? 200 : 403, `read_only ${method} ${url}`);
    }
    assert.equal(await webhooksSnapshot(h.db.current.database), before);
  });

  it('answers 401 without credentials', async () => {
    const { app } = await customerSession(h);
    const response = await app.inject({ method: 'GET', url: '/v1/webhooks' });
    assert.equal(response.statusCode, 401);
  });
});
