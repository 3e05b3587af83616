/**
 * The platform's two generations of the merchant record (contract section 20):
 * writes in v1's shape, v2's or both, answers carrying both, agreement where
 * both name one fact, CBU/CVU check digits, per-country lengths. Every refusal
 * is a 400 naming the field, and writes nothing.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { json } from '../helpers/app.js';
import { app, created, db, owner, useMerchantApp, world } from '../helpers/merchant-app.js';
import {
  argentineMerchant,
  createMerchant,
  getMerchant,
  merchantState,
  mexicanMerchant,
  patchMerchant,
} from '../helpers/merchants.js';

useMerchantApp();

/** An account whose second check digit is 0 (stdnum 1.12.0 refuses it), and an ordinary one. */
const CBU_CHECK_DIGIT_0 = '0170099220000067797370';
const CBU = '2850590940090418135201';

/** A merchant in the platform's v1 shape only: tax, representative_id, settlement_condition. */
function v1Merchant(overrides: Record<string, unknown> = {}) {
  const { tax_identification: _v2, ...rest } = argentineMerchant(world.customerId);
  return {
    ...rest,
    tax: { id: '20-26756539-3', type: 'RESPONSABLE_INSCRIPTO' },
    phone: '+54 221 555 0199',
    activity: 'Cafetería',
    category: '5814',
    settlement_condition: { transaction_fee: '3.5', settlement: 'T+1', cbu_or_cvu: '285-0590940090418135201' },
    representative: {
      type: 'PRESIDENT',
      name: 'Ana',
      surname: 'García',
      representative_id: { type: 'DNI', number: '26756539' },
      birth_date: '1978-05-21',
      email: 'ana@example.com',
      phone: '+54 221 555 0100',
    },
    ...overrides,
  };
}

/** Sends `request` and checks a 400 naming every one of `fields`, and that nothing was written. */
async function refused(request: () => ReturnType<typeof createMerchant>, code: string, ...fields: string[]) {
  const before = await merchantState(db.database);
  const res = await request();
  assert.equal(res.statusCode, 400, res.body);
  const problem = json(res);
  assert.equal(problem.code, code, res.body);
  const named = (problem.errors ?? []).map((e: { field: string }) => e.field);
  for (const field of fields)
    assert.ok(
      named.some((n: string) => n === field || n.startsWith(`${field}.`)),
      `names ${field}: ${res.body}`,
    );
  assert.equal(await merchantState(db.database), before, 'nothing was written');
  return problem;
}

describe('both generations of the merchant record', () => {
  it("creates a merchant from the platform's v1 shape alone, and answers both generations everywhere", async () => {
    const merchant = await created(v1Merchant());
    assert.deepEqual(merchant.tax_identification, { type: 'CUIT', number: '20267565393' });
    assert.deepEqual(merchant.tax, { id: '20267565393', type: 'RESPONSABLE_INSCRIPTO' });
    assert.deepEqual(merchant.financial_info, { tax_condition: 'RESPONSABLE_INSCRIPTO' });
    assert.deepEqual(merchant.settlement_condition, { transaction_fee: '3.5', settlement: 'T+1', cbu_or_cvu: CBU });
    assert.deepEqual(merchant.representative, {
      type: 'PRESIDENT',
      name: 'Ana',
      surname: 'García',
      identification: { type: 'DNI', number: '26756539' },
      representative_id: { type: 'DNI', number: '26756539' },
      birth_date: '1978-05-21',
      email: 'ana@example.com',
      phone: '+54 221 555 0100',
    });
    assert.equal(merchant.phone, '+54 221 555 0199');
    assert.equal(merchant.activity, 'Cafetería');
    assert.equal(merchant.category, '5814');
    assert.deepEqual(json(await getMerchant(app, owner, merchant.id)), merchant);
    const listed = json(await app.inject({ url: `/v2/merchants?q=${merchant.id}`, headers: owner }));
    assert.deepEqual(listed._embedded.merchants, [merchant]);
  });

  it("creates from v2's shape with financial_info and address.location; tax follows them", async () => {
    const body = mexicanMerchant(world.customerId, {
      merchant_code: 'SHAPES-MX',
      financial_info: { tax_condition: 'PERSONA_FISICA', regimen: '612' },
      address: { ...mexicanMerchant(world.customerId).address, location: { lat: 19.4326, lng: -99.1332 } },
    });
    const merchant = await created(body, owner, 'v2');
    assert.deepEqual(merchant.tax, { id: 'GODE561231GR8', type: 'PERSONA_FISICA' });
    assert.deepEqual(merchant.address.location, { lat: 19.4326, lng: -99.1332 });
    assert.deepEqual(merchant.financial_info, { tax_condition: 'PERSONA_FISICA', regimen: '612' });
    assert.deepEqual(merchant.representative.representative_id, body.representative.identification);
  });

  it('takes both shapes at once when they agree, and a PATCH in either shape keeps them consistent', async () => {
    const merchant = await created(
      v1Merchant({
        tax_identification: { type: 'CUIT', number: '20267565393' },
        financial_info: { tax_condition: 'RESPONSABLE_INSCRIPTO' },
        merchant_code: 'SHAPES-BOTH',
      }),
    );
    const v1Patch = await patchMerchant(app, owner, merchant.id, { tax: { id: '30712345671', type: 'MONOTRIBUTO' } });
    assert.equal(v1Patch.statusCode, 200, v1Patch.body);
    assert.deepEqual(json(v1Patch).tax_identification, { type: 'CUIT', number: '30712345671' });
    assert.deepEqual(json(v1Patch).tax, { id: '30712345671', type: 'MONOTRIBUTO' });
    assert.deepEqual(json(v1Patch).financial_info, { tax_condition: 'MONOTRIBUTO' });
    const v2Patch = await patchMerchant(
      app,
      owner,
      merchant.id,
      {
        financial_info: { tax_condition: 'EXENTO' },
        representative: {
          ...v1Merchant().representative,
          representative_id: undefined,
          identification: { type: 'DNI', number: '1' },
        },
        settlement_condition: { transaction_fee: '2', settlement: 'T+2', cbu_or_cvu: CBU_CHECK_DIGIT_0 },
        phone: null,
      },
      'v2',
    );
    assert.equal(v2Patch.statusCode, 200, v2Patch.body);
    const changed = json(v2Patch);
    assert.equal(changed.tax.type, 'EXENTO');
    assert.deepEqual(changed.representative.representative_id, { type: 'DNI', number: '1' });
    assert.equal(changed.settlement_condition.cbu_or_cvu, CBU_CHECK_DIGIT_0);
    assert.equal(changed.phone, null);
    assert.deepEqual(json(await getMerchant(app, owner, merchant.id)), changed);
  });
});

describe('both generations: refusals, each writing nothing', () => {
  it('refuses tax.id and tax_identification.number that differ, naming both', async () => {
    await refused(
      () => createMerchant(app, owner, v1Merchant({ tax_identification: { type: 'CUIT', number: '30712345671' } })),
      'validation_failed',
      'tax.id',
      'tax_identification.number',
    );
  });

  it('refuses tax.type and financial_info.tax_condition that differ, naming both, on create and PATCH', async () => {
    await refused(
      () => createMerchant(app, owner, v1Merchant({ financial_info: { tax_condition: 'EXENTO' } })),
      'validation_failed',
      'tax.type',
      'financial_info.tax_condition',
    );
    const merchant = await created(v1Merchant({ merchant_code: 'SHAPES-TC' }));
    await refused(
      () =>
        patchMerchant(app, owner, merchant.id, {
          tax: { id: '20267565393', type: 'MONOTRIBUTO' },
          financial_info: { tax_condition: 'EXENTO' },
        }),
      'validation_failed',
      'tax.type',
      'financial_info.tax_condition',
    );
  });

  it('refuses identification and representative_id that differ, and a representative with neither', async () => {
    const representative = v1Merchant().representative;
    await refused(
      () =>
        createMerchant(
          app,
          owner,
          v1Merchant({ representative: { ...representative, identification: { type: 'DNI', number: '99' } } }),
        ),
      'validation_failed',
      'representative.identification',
      'representative.representative_id',
    );
    const { representative_id: _id, ...withoutDocument } = representative;
    await refused(
      () => createMerchant(app, owner, v1Merchant({ representative: withoutDocument })),
      'validation_failed',
      'representative.identification',
    );
  });

  it('refuses a body with neither tax nor tax_identification, and an invalid tax.id', async () => {
    const { tax: _tax, ...body } = v1Merchant();
    await refused(() => createMerchant(app, owner, body), 'validation_failed', 'tax_identification');
    await refused(
      () => createMerchant(app, owner, v1Merchant({ tax: { id: '20-26756539-4' } })),
      'invalid_tax_identification',
      'tax.id',
    );
  });

  it('refuses a CBU/CVU with a wrong check digit or length, naming settlement_condition.cbu_or_cvu', async () => {
    for (const account of ['2850590940090418135202', '2850591940090418135201', '285059094009041813520', 'x'])
      await refused(
        () =>
          createMerchant(
            app,
            owner,
            v1Merchant({ settlement_condition: { transaction_fee: '1', settlement: 'T+1', cbu_or_cvu: account } }),
          ),
        'validation_failed',
        'settlement_condition.cbu_or_cvu',
      );
  });

  it('refuses a location with one coordinate, or out of range', async () => {
    const address = argentineMerchant(world.customerId).address;
    for (const location of [{ lat: 1 }, { lng: 1 }, { lat: 91, lng: 0 }, { lat: 0, lng: -181 }])
      await refused(
        () => createMerchant(app, owner, v1Merchant({ address: { ...address, location } })),
        'validation_failed',
        'address.location',
      );
  });
});

describe('CBU and CVU check digits', () => {
  it('accepts an account whose check digit is 0, which stdnum alone refuses', async () => {
    const stdnum = createRequire(import.meta.url)('stdnum/lib/cjs/ar/cbu.js');
    assert.equal(stdnum.validate(CBU_CHECK_DIGIT_0).isValid, false, 'the library bug this works around');
    const merchant = await created(
      v1Merchant({
        merchant_code: 'SHAPES-CBU0',
        settlement_condition: { transaction_fee: '1', settlement: 'T+1', cbu_or_cvu: CBU_CHECK_DIGIT_0 },
      }),
    );
    assert.equal(merchant.settlement_condition.cbu_or_cvu, CBU_CHECK_DIGIT_0);
  });
});

describe("the platform's per-country lengths", () => {
  const ar = (overrides: Record<string, unknown>) => argentineMerchant(world.customerId, overrides);
  const mx = (overrides: Record<string, unknown>) =>
    mexicanMerchant(world.customerId, { merchant_code: undefined, ...overrides });
  const arAddress = (field: string, value: string) => ({ address: { ...ar({}).address, [field]: value } });
  const mxAddress = (field: string, value: string) => ({ address: { ...mx({}).address, [field]: value } });

  it('refuses each field one past its limit in ARG and MEX, naming the field and the rule', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [ar({ business_name: 'b'.repeat(51) }), 'business_name'],
      [ar({ fantasy_name: 'f'.repeat(51) }), 'fantasy_name'],
      [ar(arAddress('city', 'c'.repeat(31))), 'address.city'],
      [ar(arAddress('zip', 'B1900')), 'address.zip'],
      [ar(arAddress('zip', 'B1900AAAA')), 'address.zip'],
      [ar(arAddress('number', '1'.repeat(11))), 'address.number'],
      [ar(arAddress('number', '12B')), 'address.number'],
      [mx({ business_name: 'b'.repeat(61) }), 'business_name'],
      [mx({ fantasy_name: 'f'.repeat(19) }), 'fantasy_name'],
      [mx(mxAddress('city', 'c'.repeat(19))), 'address.city'],
      [mx(mxAddress('zip', '0670')), 'address.zip'],
      [mx(mxAddress('zip', '0'.repeat(11))), 'address.zip'],
      [mx(mxAddress('number', '1234567')), 'address.number'],
    ];
    for (const [body, field] of cases) {
      const problem = await refused(() => createMerchant(app, owner, body), 'validation_failed', field);
      assert.match(problem.errors[0].message, /in (ARG|MEX)/);
    }
  });

  it('accepts each field at its limit', async () => {
    await created(
      ar({
        merchant_code: 'LEN-AR',
        business_name: 'b'.repeat(50),
        fantasy_name: 'f'.repeat(50),
        address: { ...ar({}).address, city: 'c'.repeat(30), zip: 'C1425DKA', number: '1'.repeat(10) },
      }),
    );
    await created(
      mx({
        merchant_code: 'LEN-MX',
        business_name: 'b'.repeat(60),
        fantasy_name: 'f'.repeat(18),
        address: { ...mx({}).address, city: 'c'.repeat(18), zip: '0'.repeat(10), number: '123456' },
      }),
    );
  });

  it("applies the merchant's country on PATCH", async () => {
    const merchant = await created(mx({ merchant_code: 'LEN-PATCH' }));
    await refused(
      () => patchMerchant(app, owner, merchant.id, { fantasy_name: 'f'.repeat(19) }),
      'validation_failed',
      'fantasy_name',
    );
    await refused(
      () => patchMerchant(app, owner, merchant.id, mxAddress('number', '1234567'), 'v2'),
      'validation_failed',
      'address.number',
    );
  });
});
