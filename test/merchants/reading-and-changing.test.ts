/** Onboarded merchants read and changed: GET one, PATCH /v1 and /v2 (refusals writing nothing), and which callers may create or change them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, asc, eq } from 'drizzle-orm';
import { auditEvents, domainEvents } from '../../src/db/schema.js';
import { json } from '../helpers/app.js';
import { issueKey } from '../helpers/fixtures.js';
import {
  app,
  created,
  db,
  freshCode,
  merchantCaller,
  owner,
  refused,
  useMerchantApp,
  world,
} from '../helpers/merchant-app.js';
import {
  argentineMerchant,
  createMerchant,
  getMerchant,
  merchantState,
  mexicanMerchant,
  patchMerchant,
} from '../helpers/merchants.js';
import { apiKey } from '../helpers/plans.js';

useMerchantApp();

describe('GET /v1/merchants/{id}', () => {
  it("answers 404 merchant_not_found for another customer's merchant and for an unknown id", async () => {
    for (const id of [world.otherMerchantIds[0]!, '00000000-0000-4000-8000-000000000000']) {
      const res = await getMerchant(app, owner, id);
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'merchant_not_found');
    }
  });

  it('shows a merchant caller itself, and no other merchant of its customer', async () => {
    const own = await getMerchant(app, merchantCaller, world.merchantIds[0]!);
    assert.equal(own.statusCode, 200);
    assert.equal(json(own).id, world.merchantIds[0]);
    assert.equal((await getMerchant(app, merchantCaller, world.merchantIds[1]!)).statusCode, 404);
  });

  it('answers 400 for an id that is not a UUID and 401 without credentials', async () => {
    assert.equal((await getMerchant(app, owner, 'not-a-uuid')).statusCode, 400);
    assert.equal((await getMerchant(app, {}, world.merchantIds[0]!)).statusCode, 401);
  });
});

describe('PATCH /v1/merchants/{id} and /v2/merchants/{id}', () => {
  it('changes the fields sent and keeps the others; the name follows fantasy_name; null clears an optional field', async () => {
    const merchant = await created(mexicanMerchant(world.customerId, { merchant_code: freshCode() }));
    const res = await patchMerchant(app, owner, merchant.id, { fantasy_name: 'Tacos Lalo Centro', email: null });
    assert.equal(res.statusCode, 200, res.body);
    const changed = json(res);
    assert.deepEqual(changed, {
      ...merchant,
      name: 'Tacos Lalo Centro',
      fantasy_name: 'Tacos Lalo Centro',
      email: null,
      update_date: changed.update_date,
    });
    assert.ok(changed.update_date >= merchant.update_date);
    const v2 = await patchMerchant(
      app,
      owner,
      merchant.id,
      {
        tax_identification: { type: 'RFC', number: 'MAB930714-8T4' },
        representative: null,
        legal_type: 'LEGAL_ENTITY',
      },
      'v2',
    );
    assert.equal(v2.statusCode, 200, v2.body);
    assert.deepEqual(json(v2).tax_identification, { type: 'RFC', number: 'MAB9307148T4' });
    assert.equal(json(v2).representative, null);
    assert.deepEqual(json(await getMerchant(app, owner, merchant.id)), json(v2));
  });

  it('records audit event merchant.updated with the fields changed and MERCHANT_UPDATED with the merchant', async () => {
    const merchant = await created(argentineMerchant(world.customerId, { merchant_code: freshCode() }));
    const changed = json(
      await patchMerchant(app, owner, merchant.id, { business_name: 'Otra S.A.', fantasy_name: 'Café 7' }),
    );
    const audits = await db.database.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.targetId, merchant.id), eq(auditEvents.action, 'merchant.updated')));
    assert.deepEqual(
      audits.map((a) => a.details),
      [{ fields: ['business_name'] }],
    );
    const events = await db.database.db
      .select()
      .from(domainEvents)
      .where(eq(domainEvents.type, 'MERCHANT_UPDATED'))
      .orderBy(asc(domainEvents.createdAt));
    assert.deepEqual(events.at(-1)?.data, changed);
  });

  it('writes nothing for a PATCH that changes nothing', async () => {
    const merchant = await created(argentineMerchant(world.customerId, { merchant_code: freshCode() }));
    const before = await merchantState(db.database);
    const res = await patchMerchant(app, owner, merchant.id, {
      fantasy_name: 'Café 7',
      tax_identification: { type: 'CUIT', number: '30712345671' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), merchant);
    assert.equal(await merchantState(db.database), before);
  });

  it('lets a merchant made by the import take the new fields; its name follows business_name', async () => {
    const id = world.merchantIds[1]!;
    const res = await patchMerchant(app, owner, id, { business_name: 'Alpha Uno S.R.L.', legal_type: 'LEGAL_ENTITY' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).name, 'Alpha Uno S.R.L.');
    assert.equal(json(res).country, null);
    // Without a country there is nothing to check an identifier against.
    await refused(
      () => patchMerchant(app, owner, id, { tax_identification: { type: 'CUIT', number: '30712345671' } }),
      400,
      'invalid_tax_identification',
      'tax_identification.number',
    );
  });

  it('refuses to change id, customer_id, country or name: 400 naming the field, nothing changed', async () => {
    const merchant = await created(argentineMerchant(world.customerId, { merchant_code: freshCode() }));
    for (const [field, value] of [
      ['id', '00000000-0000-4000-8000-000000000000'],
      ['customer_id', world.otherCustomerId],
      ['country', 'MEX'],
      ['name', 'Renamed'],
    ]) {
      await refused(() => patchMerchant(app, owner, merchant.id, { [field!]: value }), 400, 'validation_failed', field);
      await refused(
        () => patchMerchant(app, owner, merchant.id, { fantasy_name: 'Sneaky', [field!]: value }, 'v2'),
        400,
        'validation_failed',
        field,
      );
    }
  });

  it('refuses a tax identifier that does not fit the merchant, a taken code, an empty body and bad text', async () => {
    const code = freshCode();
    await created(argentineMerchant(world.customerId, { merchant_code: code }));
    const merchant = await created(argentineMerchant(world.customerId, { merchant_code: freshCode() }));
    const patch = (body: unknown) => () => patchMerchant(app, owner, merchant.id, body);
    await refused(
      patch({ tax_identification: { type: 'RFC', number: 'GODE561231GR8' } }),
      400,
      'invalid_tax_identification',
      'tax_identification.number',
    );
    await refused(
      patch({ tax_identification: { type: 'CUIT', number: '20267565392' } }),
      400,
      'invalid_tax_identification',
      'tax_identification.number',
    );
    await refused(patch({ merchant_code: code }), 409, 'merchant_code_conflict');
    await refused(patch({}), 400, 'validation_failed');
    await refused(patch({ status: 'CLOSED' }), 400, 'validation_failed', 'status');
    await refused(patch({ fantasy_name: null }), 400, 'validation_failed', 'fantasy_name');
    for (const field of ['business_name', 'fantasy_name', 'additional_info', 'merchant_code', 'email'])
      for (const value of ['a\u0000b', 'y'.repeat(10_000)])
        await refused(patch({ [field]: value }), 400, 'validation_failed', field);
    await refused(
      patch({ address: { ...merchant.address, street: 'z'.repeat(10_000) } }),
      400,
      'validation_failed',
      'address.street',
    );
  });

  it("answers 404 merchant_not_found for another customer's merchant, writing nothing", async () => {
    await refused(
      () => patchMerchant(app, owner, world.otherMerchantIds[0]!, { fantasy_name: 'Mine now' }),
      404,
      'merchant_not_found',
    );
  });
});

describe('merchants: security', () => {
  it('refuses a merchant key creating or patching merchants: 403, nothing written', async () => {
    await refused(() => createMerchant(app, merchantCaller, argentineMerchant(world.customerId)), 403, 'forbidden');
    await refused(
      () => createMerchant(app, merchantCaller, argentineMerchant(world.customerId), 'v2'),
      403,
      'forbidden',
    );
    await refused(
      () => patchMerchant(app, merchantCaller, world.merchantIds[0]!, { fantasy_name: 'Self-made' }),
      403,
      'forbidden',
    );
    await refused(
      () => patchMerchant(app, merchantCaller, world.merchantIds[0]!, { status: 'ACTIVE' }, 'v2'),
      403,
      'forbidden',
    );
    // Even with a body the schema would refuse: the caller learns nothing about it.
    await refused(() => createMerchant(app, merchantCaller, { bogus: true }), 403, 'forbidden');
  });

  it('refuses a read-only customer key (403 read_only_key) and no credentials (401)', async () => {
    const key = await issueKey(app, { user: 'ro@alpha.test', customerId: world.customerId }, { access: 'read_only' });
    await refused(
      () => createMerchant(app, apiKey(key.api_key), argentineMerchant(world.customerId)),
      403,
      'read_only_key',
    );
    await refused(
      () => patchMerchant(app, apiKey(key.api_key), world.merchantIds[0]!, { fantasy_name: 'x' }),
      403,
      'read_only_key',
    );
    await refused(() => createMerchant(app, {}, argentineMerchant(world.customerId)), 401, 'missing_credentials');
    assert.equal((await getMerchant(app, apiKey(key.api_key), world.merchantIds[0]!)).statusCode, 200);
  });
});
