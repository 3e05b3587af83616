/**
 * Merchants onboarded and changed through the API (docs/api.md#merchants):
 * POST /v1 and /v2, GET one, PATCH /v1 and /v2; tax identifiers checked by
 * country; merchant_code unique within a customer, under concurrency too; every
 * refusal writes nothing. One app and one world for the file: each test makes
 * the merchants it needs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, asc, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { auditEvents, domainEvents, merchants } from '../../src/db/schema.js';
import { bearer, json } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { issueKey, loginAs, seedWorld, type World } from '../helpers/fixtures.js';
import {
  argentineMerchant,
  createMerchant,
  getMerchant,
  merchantState,
  mexicanMerchant,
  patchMerchant,
} from '../helpers/merchants.js';
import { apiKey } from '../helpers/plans.js';

let db: TestDatabase;
let app: FastifyInstance;
let world: World;
let owner: Record<string, string>;
let other: Record<string, string>;
let merchantCaller: Record<string, string>;
let codes = 0;
/** A merchant_code no other test uses. */
const freshCode = () => `CODE-${++codes}`;

before(async () => {
  db = await createTestDatabase();
  app = await buildApp({
    config: testConfig({ rateLimitAnonymousPerMinute: 0, loginMaxFailures: 0 }),
    database: db.database,
  });
  await app.ready();
  world = await seedWorld(app);
  owner = bearer((await loginAs(app, world.login)).access_token) as Record<string, string>;
  other = bearer((await loginAs(app, world.otherLogin)).access_token) as Record<string, string>;
  const key = await issueKey(app, {
    user: 'pos@alpha.test',
    customerId: world.customerId,
    merchantId: world.merchantIds[0]!,
  });
  merchantCaller = apiKey(key.api_key) as Record<string, string>;
});

after(async () => {
  await app.close();
  await db.drop();
});

async function created(body: unknown, headers = owner, version = 'v1') {
  const res = await createMerchant(app, headers, body, version);
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

/** Sends `request` and checks its refusal: status, code, the field named, and that nothing was written. */
async function refused(
  request: () => Promise<{ statusCode: number; body: string; json(): unknown }>,
  status: number,
  code: string,
  field?: string,
) {
  const before = await merchantState(db.database);
  const res = await request();
  assert.equal(res.statusCode, status, res.body);
  const problem = res.json() as { code: string; errors?: Array<{ field: string; message: string }> };
  assert.equal(problem.code, code, res.body);
  if (field)
    assert.ok(
      problem.errors?.some((e) => e.field === field),
      `names ${field}: ${res.body}`,
    );
  assert.equal(await merchantState(db.database), before, 'nothing was written');
  return problem;
}

describe('POST /v1/merchants and /v2/merchants: happy', () => {
  it('onboards an Argentine merchant: 201 with the whole record, the CUIT compact, readable and listed', async () => {
    const code = freshCode();
    const merchant = await created(argentineMerchant(world.customerId, { merchant_code: code }));
    assert.deepEqual(merchant, {
      id: merchant.id,
      customer_id: world.customerId,
      name: 'Café 7',
      business_name: 'Cafetería La Plata S.A.',
      fantasy_name: 'Café 7',
      legal_type: 'LEGAL_ENTITY',
      country: 'ARG',
      merchant_code: code,
      email: null,
      status: 'ACTIVE',
      address: { state: 'Buenos Aires', city: 'La Plata', zip: 'B1900AAA', street: 'Calle 7', number: '1234' },
      tax_identification: { type: 'CUIT', number: '30712345671' },
      tax: { id: '30712345671', type: null },
      representative: null,
      additional_info: null,
      phone: null,
      activity: null,
      category: null,
      settlement_condition: null,
      financial_info: null,
      create_date: merchant.create_date,
      update_date: merchant.create_date,
    });
    assert.deepEqual(json(await getMerchant(app, owner, merchant.id)), merchant);
    const listed = json(await app.inject({ method: 'GET', url: `/v1/merchants?q=${merchant.id}`, headers: owner }));
    assert.deepEqual(listed._embedded.merchants, [merchant]);
  });

  it('onboards a Mexican merchant through /v2 with every optional field, the RFC upper-cased', async () => {
    const body = mexicanMerchant(world.customerId, { merchant_code: freshCode() });
    const merchant = await created(body, owner, 'v2');
    assert.equal(merchant.name, 'Tacos Lalo');
    assert.deepEqual(merchant.tax_identification, { type: 'RFC', number: 'GODE561231GR8' });
    assert.deepEqual(merchant.representative, {
      ...body.representative,
      representative_id: body.representative.identification,
      birth_date: null,
    });
    assert.deepEqual(merchant.address, body.address);
    assert.equal(merchant.email, 'lalo@example.mx');
    assert.equal(merchant.additional_info, 'Solo efectivo los domingos');
    assert.deepEqual(json(await getMerchant(app, owner, merchant.id)), merchant);
  });

  it('records audit event merchant.created and domain event MERCHANT_CREATED carrying the merchant as answered', async () => {
    const merchant = await created(argentineMerchant(world.customerId, { merchant_code: freshCode() }));
    const [audit] = await db.database.db.select().from(auditEvents).where(eq(auditEvents.targetId, merchant.id));
    assert.equal(audit?.action, 'merchant.created');
    assert.equal(audit?.customerId, world.customerId);
    const events = await db.database.db
      .select()
      .from(domainEvents)
      .where(and(eq(domainEvents.type, 'MERCHANT_CREATED'), eq(domainEvents.customerId, world.customerId)));
    assert.deepEqual(events.find((e) => (e.data as { id: string }).id === merchant.id)?.data, merchant);
  });

  it('lets a customer key with full access onboard, and the same code serve two customers', async () => {
    const key = await issueKey(app, { user: 'ci@alpha.test', customerId: world.customerId });
    const code = freshCode();
    await created(
      argentineMerchant(world.customerId, { merchant_code: code }),
      apiKey(key.api_key) as Record<string, string>,
    );
    await created(argentineMerchant(world.otherCustomerId, { merchant_code: code }), other);
  });
});

describe('POST /v1/merchants: errors, each writing nothing', () => {
  it('refuses a CUIT whose check digit is wrong: 400 naming tax_identification.number', async () => {
    const body = argentineMerchant(world.customerId, { tax_identification: { type: 'CUIT', number: '30-71234567-2' } });
    const problem = await refused(
      () => createMerchant(app, owner, body),
      400,
      'invalid_tax_identification',
      'tax_identification.number',
    );
    assert.match(problem.errors![0]!.message, /check digit/);
  });

  it('refuses an RFC for an Argentine merchant, and a CUIT for a Mexican one', async () => {
    for (const body of [
      argentineMerchant(world.customerId, { tax_identification: { type: 'RFC', number: 'GODE561231GR8' } }),
      argentineMerchant(world.customerId, { tax_identification: { type: 'CUIT', number: 'GODE561231GR8' } }),
      mexicanMerchant(world.customerId, { tax_identification: { type: 'CUIT', number: '30712345671' } }),
      mexicanMerchant(world.customerId, { tax_identification: { type: 'RFC', number: '30712345671' } }),
    ])
      await refused(
        () => createMerchant(app, owner, body),
        400,
        'invalid_tax_identification',
        'tax_identification.number',
      );
  });

  it('refuses an RFC whose check character, date or length is wrong', async () => {
    for (const number of ['GODE561231GR9', 'GODE561331GR8', 'GODE561231GR'])
      await refused(
        () =>
          createMerchant(
            app,
            owner,
            mexicanMerchant(world.customerId, { tax_identification: { type: 'RFC', number } }),
          ),
        400,
        'invalid_tax_identification',
        'tax_identification.number',
      );
  });

  it('refuses a country outside ARG and MEX, and a missing required field', async () => {
    for (const country of ['BRA', 'arg', 'AR', '']) {
      await refused(
        () => createMerchant(app, owner, argentineMerchant(world.customerId, { country })),
        400,
        'validation_failed',
        'country',
      );
    }
    for (const field of [
      'country',
      'legal_type',
      'business_name',
      'fantasy_name',
      'address',
      'tax_identification',
      'customer_id',
    ]) {
      const body: Record<string, unknown> = argentineMerchant(world.customerId);
      delete body[field];
      await refused(() => createMerchant(app, owner, body), 400, 'validation_failed', field);
    }
  });

  it("answers 404 customer_not_found for another customer's customer_id, and for one that does not exist", async () => {
    for (const customerId of [world.otherCustomerId, '00000000-0000-4000-8000-000000000000'])
      await refused(() => createMerchant(app, owner, argentineMerchant(customerId)), 404, 'customer_not_found');
  });

  it('answers 409 merchant_code_conflict for a code the customer already uses', async () => {
    const code = freshCode();
    await created(argentineMerchant(world.customerId, { merchant_code: code }));
    await refused(
      () => createMerchant(app, owner, mexicanMerchant(world.customerId, { merchant_code: code })),
      409,
      'merchant_code_conflict',
    );
  });

  it('refuses NUL and 10,000-character strings in every text field with a 400 naming it', async () => {
    const base = mexicanMerchant(world.customerId, { merchant_code: freshCode() });
    const textFields: Array<[string, (v: string) => Record<string, unknown>]> = [
      ...['business_name', 'fantasy_name', 'additional_info', 'email', 'merchant_code'].map(
        (f) => [f, (v: string) => ({ [f]: v })] as [string, (v: string) => Record<string, unknown>],
      ),
      ...['state', 'city', 'zip', 'street', 'number', 'floor', 'apartment'].map(
        (f) =>
          [`address.${f}`, (v: string) => ({ address: { ...base.address, [f]: v } })] as [
            string,
            (v: string) => Record<string, unknown>,
          ],
      ),
      ['tax_identification.number', (v) => ({ tax_identification: { type: 'RFC', number: v } })],
      ...['name', 'surname', 'email', 'phone'].map(
        (f) =>
          [`representative.${f}`, (v: string) => ({ representative: { ...base.representative, [f]: v } })] as [
            string,
            (v: string) => Record<string, unknown>,
          ],
      ),
      ...['type', 'number'].map(
        (f) =>
          [
            `representative.identification.${f}`,
            (v: string) => ({
              representative: {
                ...base.representative,
                identification: { ...base.representative.identification, [f]: v },
              },
            }),
          ] as [string, (v: string) => Record<string, unknown>],
      ),
    ];
    for (const [field, set] of textFields) {
      for (const value of ['Caf\u0000e', 'x'.repeat(10_000)]) {
        await refused(() => createMerchant(app, owner, { ...base, ...set(value) }), 400, 'validation_failed', field);
      }
    }
    await created(base);
  });

  it('refuses unknown fields, among them name and status', async () => {
    for (const field of ['name', 'status', 'id'])
      await refused(
        () => createMerchant(app, owner, { ...argentineMerchant(world.customerId), [field]: 'x' }),
        400,
        'validation_failed',
        field,
      );
  });
});

describe('POST /v1/merchants: concurrency', () => {
  it('of 50 parallel creates with one merchant_code exactly one answers 201, the others 409, and one row exists', async () => {
    const code = freshCode();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        createMerchant(
          app,
          owner,
          argentineMerchant(world.customerId, { merchant_code: code, fantasy_name: `Shop ${i}` }),
        ),
      ),
    );
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [201, ...Array(49).fill(409)]);
    const rows = await db.database.db
      .select()
      .from(merchants)
      .where(and(eq(merchants.customerId, world.customerId), eq(merchants.merchantCode, code)));
    assert.equal(rows.length, 1);
  });
});

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
