/** Merchants onboarded through POST /v1 and /v2/merchants: tax identifiers checked by country, merchant_code unique, refusals writing nothing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { auditEvents, domainEvents, merchants } from '../../src/db/schema.js';
import { json } from '../helpers/app.js';
import { issueKey } from '../helpers/fixtures.js';
import { app, created, db, freshCode, other, owner, refused, useMerchantApp, world } from '../helpers/merchant-app.js';
import { argentineMerchant, createMerchant, getMerchant, mexicanMerchant } from '../helpers/merchants.js';
import { apiKey } from '../helpers/plans.js';

useMerchantApp();

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
