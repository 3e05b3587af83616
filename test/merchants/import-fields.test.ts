/**
 * The operator's import takes the API's merchant fields, every one optional
 * (docs/api.md#merchants): checked by the API's schemas and tax identifier
 * rules, merchant_code unique within a customer, fields left out kept. A
 * refused file writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { ImportError } from '../../src/errors.js';
import { bearer, json } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { loginAs, seedWorld, uuid, type World } from '../helpers/fixtures.js';
import { argentineMerchant, getMerchant, merchantState, patchMerchant } from '../helpers/merchants.js';
import { plan } from '../helpers/plans.js';

let db: TestDatabase;
let app: FastifyInstance;
let world: World;
let owner: Record<string, string>;

before(async () => {
  db = await createTestDatabase();
  app = await buildApp({ config: testConfig(), database: db.database });
  await app.ready();
  world = await seedWorld(app);
  owner = bearer((await loginAs(app, world.login)).access_token) as Record<string, string>;
});

after(async () => {
  await app.close();
  await db.drop();
});

const importMerchants = (merchants: unknown[], extra: Record<string, unknown> = {}) =>
  app.services.importer.importDocument({ merchants, ...extra });

/** A merchant entry with the API's fields (the create body without customer_id), for `customerId`. */
function entry(overrides: Record<string, unknown> = {}) {
  const { customer_id, ...fields } = argentineMerchant(world.customerId);
  return { id: uuid('d'), customer_id, ...fields, ...overrides };
}

async function refusedImport(merchants: unknown[], path: string, reason: RegExp, extra: Record<string, unknown> = {}) {
  const before = await merchantState(db.database);
  await assert.rejects(importMerchants(merchants, extra), (err: unknown) => {
    assert.ok(err instanceof ImportError, String(err));
    assert.equal(err.path, path);
    assert.match(err.reason, reason);
    return true;
  });
  assert.equal(await merchantState(db.database), before, 'nothing was written');
}

describe('import: merchant fields', () => {
  it('writes the fields as the API answers them, the CUIT compact and the display name the fantasy name', async () => {
    const m = entry({ merchant_code: 'IMP-1', email: 'shop@example.com' });
    await importMerchants([m]);
    const merchant = json(await getMerchant(app, owner, m.id));
    assert.equal(merchant.name, 'Café 7');
    assert.deepEqual(merchant.tax_identification, { type: 'CUIT', number: '30712345671' });
    assert.equal(merchant.merchant_code, 'IMP-1');
    assert.equal(merchant.status, 'ACTIVE');
    assert.deepEqual(merchant.address, m.address);
  });

  it('keeps the fields an entry leaves out, and still takes a merchant with only a name', async () => {
    const m = entry({ merchant_code: 'IMP-2' });
    await importMerchants([m]);
    await importMerchants([{ id: m.id, customer_id: m.customer_id, business_name: 'Renamed S.A.' }]);
    const merchant = json(await getMerchant(app, owner, m.id));
    assert.equal(merchant.business_name, 'Renamed S.A.');
    assert.equal(merchant.fantasy_name, 'Café 7');
    assert.equal(merchant.name, 'Café 7');
    assert.equal(merchant.merchant_code, 'IMP-2');
    await importMerchants([{ id: m.id, customer_id: m.customer_id, email: 'new@example.com' }]);
    assert.equal(json(await getMerchant(app, owner, m.id)).email, 'new@example.com');
    assert.equal(json(await getMerchant(app, owner, m.id)).name, 'Café 7');
    const plain = { id: uuid('d'), customer_id: world.customerId, name: 'Plain shop' };
    await importMerchants([plain]);
    assert.equal(json(await getMerchant(app, owner, plain.id)).name, 'Plain shop');
  });

  it('refuses a CUIT with a wrong check digit, an RFC for Argentina, and an identifier without country', async () => {
    await refusedImport(
      [entry({ tax_identification: { type: 'CUIT', number: '30712345672' } })],
      '$.merchants[0].tax_identification.number',
      /check digit/,
    );
    await refusedImport(
      [entry(), entry({ tax_identification: { type: 'RFC', number: 'GODE561231GR8' } })],
      '$.merchants[1].tax_identification.number',
      /must be a CUIT/,
    );
    const { country: _, ...withoutCountry } = entry();
    await refusedImport([withoutCountry], '$.merchants[0].country', /required with tax_identification/);
  });

  it("refuses what the API's schema refuses, with the JSON path", async () => {
    await refusedImport([entry({ country: 'BRA' })], '$.merchants[0].country', /must be one of/);
    await refusedImport([entry({ fantasy_name: 'a\u0000b' })], '$.merchants[0].fantasy_name', /U\+0000/);
    await refusedImport([entry({ address: { city: 'x' } })], '$.merchants[0].address.state', /required/);
    await refusedImport([{ id: uuid('d'), customer_id: world.customerId }], '$.merchants[0].name', /required/);
  });

  it('refuses a merchant_code twice for one customer in the file, or held by another merchant of the customer', async () => {
    await refusedImport(
      [entry({ merchant_code: 'DUP' }), entry({ merchant_code: 'DUP' })],
      '$.merchants[1].merchant_code',
      /duplicate/,
    );
    const holder = entry({ merchant_code: 'HELD' });
    await importMerchants([holder]);
    await refusedImport([entry({ merchant_code: 'HELD' })], '$.merchants[0].merchant_code', /already has/);
    // The same code in another customer is fine, and so is the holder imported again.
    await importMerchants([holder, { ...entry({ merchant_code: 'HELD' }), customer_id: world.otherCustomerId }]);
  });

  it('refuses a new country for a merchant without the identifier that fits it', async () => {
    const m = entry();
    await importMerchants([m]);
    await refusedImport(
      [{ id: m.id, customer_id: m.customer_id, country: 'MEX' }],
      '$.merchants[0].country',
      /new country/,
    );
  });

  it('refuses assignments to an INACTIVE merchant', async () => {
    const m = entry();
    const p = plan();
    await importMerchants([m], { payment_plans: [p] });
    assert.equal((await patchMerchant(app, owner, m.id, { status: 'INACTIVE' })).statusCode, 200);
    await refusedImport([], '$.assignments[0].merchant_id', /INACTIVE/, {
      assignments: [{ merchant_id: m.id, payment_plan_ids: [p.id] }],
    });
  });
});
