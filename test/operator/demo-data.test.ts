/** The demo data set, whose passwords are published, only where no other machine can reach it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { testConfig, type Config } from '../../src/config.js';
import { customers } from '../../src/db/schema.js';
import { DEMO_LOGINS, demoDocument } from '../../src/features/operator/demo-data.js';
import { listensOnLoopback, loadDemoData, prepareDemoData } from '../../src/server.js';
import { json, useTestApp } from '../helpers/app.js';
import { ON_POSTGRES } from '../helpers/database.js';

const h = useTestApp();
const EMBEDDED_ONLY = ON_POSTGRES ? 'the demo data set is loaded at start into an embedded database only' : false;

/** What the server does at start, with its warnings collected. */
async function start(overrides: Partial<Config>) {
  const app = await h.app();
  const warnings: string[] = [];
  const config = testConfig(overrides);
  const banner = await prepareDemoData(config, h.db.current.database, app.services.hasher, {
    warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
    info() {},
  });
  const [row] = await h.db.current.database.db.select({ n: count() }).from(customers);
  return { app, banner, warnings, customers: row!.n };
}

describe('demo data at start', () => {
  it('tells loopback from the rest', async () => {
    for (const host of ['127.0.0.1', '127.0.0.53', '::1', 'localhost'])
      assert.equal(await listensOnLoopback(host), true, host);
    for (const host of ['0.0.0.0', '::', '192.0.2.10', '2001:db8::1', ''])
      assert.equal(await listensOnLoopback(host), false, host);
  });

  it('is not loaded into an empty embedded database while the server listens beyond loopback', {
    skip: EMBEDDED_ONLY,
  }, async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.10']) {
      const started = await start({ host, loadDemoData: 'on-loopback' });
      assert.equal(started.customers, 0, `nothing loaded on ${host}`);
      assert.equal(started.banner, '');
      assert.deepEqual(started.warnings, []);
    }
  });

  it('is loaded on loopback, and its users log in', { skip: EMBEDDED_ONLY }, async () => {
    const started = await start({ host: '127.0.0.1', loadDemoData: 'on-loopback' });
    assert.equal(started.customers, 2);
    assert.match(started.banner, new RegExp(DEMO_LOGINS[0].password));
    assert.deepEqual(started.warnings, []);
    const login = await started.app.inject({ method: 'POST', url: '/v1/login', payload: DEMO_LOGINS[0] });
    assert.equal(login.statusCode, 200);
    assert.ok(json(login).token.access_token);
  });

  it('is loaded beyond loopback when FEEGATE_DEMO=true, and says so in one warning line', {
    skip: EMBEDDED_ONLY,
  }, async () => {
    const started = await start({ host: '0.0.0.0', loadDemoData: 'always' });
    assert.equal(started.customers, 2);
    assert.notEqual(started.banner, '');
    assert.equal(started.warnings.length, 1);
  });

  it('is never loaded with FEEGATE_DEMO=false', async () => {
    const started = await start({ host: '127.0.0.1', loadDemoData: 'never' });
    assert.equal(started.customers, 0);
  });

  it('found beyond loopback, its users with published passwords get one warning line naming them; on loopback none', async () => {
    const app = await h.app();
    await loadDemoData(testConfig(), h.db.current.database);
    const beyond = await start({ host: '0.0.0.0', loadDemoData: 'never' });
    assert.equal(beyond.warnings.length, 1, beyond.warnings.join('\n'));
    const [line] = beyond.warnings;
    for (const login of DEMO_LOGINS) assert.ok(line!.includes(login.user), line);
    assert.match(line!, /published passwords .* listens on 0\.0\.0\.0, beyond loopback/);
    assert.ok(
      !DEMO_LOGINS.some((login) => line!.includes(login.password)),
      'the warning does not repeat the passwords',
    );
    assert.deepEqual((await start({ host: '127.0.0.1', loadDemoData: 'never' })).warnings, []);
    // A demo user whose password was changed (an import with another one) is no longer reported.
    const doc = demoDocument();
    const acme = doc.users!.find((u) => u.email === DEMO_LOGINS[0].user)!;
    await app.services.importer.importDocument({ ...doc, users: [{ ...acme, password: 'a-private-password' }] });
    const after = await start({ host: '0.0.0.0', loadDemoData: 'never' });
    assert.equal(after.warnings.length, 1);
    assert.ok(
      !after.warnings[0]!.includes(DEMO_LOGINS[0].user) && after.warnings[0]!.includes(DEMO_LOGINS[1].user),
      after.warnings[0],
    );
  });
});
