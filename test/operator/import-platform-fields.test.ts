/**
 * The operator's import takes the platform's merchant fields of both
 * generations (contract section 20) with the API's own checks: the country's
 * lengths, tax identifiers, CBU/CVU check digits, v1 and v2 agreeing. A refusal
 * names the entry and the field, and nothing is written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { merchants } from '../../src/db/schema.js';
import { ImportError } from '../../src/errors.js';
import { EXAMPLE_ADDRESS, EXAMPLE_TAX } from '../../src/features/merchants/merchants-schemas.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { loginAs, uuid } from '../helpers/fixtures.js';

const h = useTestApp();

/** A real account whose check digits are both valid; the second block's is 0, which a 10 − sum rule refuses. */
const CBU = '2850590940090418135201';

function platformDocument() {
  const customer = uuid('c');
  const merchant = uuid('d');
  return {
    customers: [{ id: customer, name: 'Acme' }],
    merchants: [
      {
        id: merchant,
        customer_id: customer,
        country: 'ARG',
        business_name: 'Acme S.A.',
        fantasy_name: 'Acme',
        address: EXAMPLE_ADDRESS,
        tax: { id: '30-71234567-1', type: 'RESPONSABLE_INSCRIPTO' },
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
          email: 'ana.garcia@example.com',
          phone: '+54 221 555 0100',
        },
        financial_info: { tax_condition: 'RESPONSABLE_INSCRIPTO', iibb: 'exento' },
      },
    ],
    users: [{ email: 'ops@acme.test', type: 'CUSTOMER', customer_id: customer, password: 'a-long-password' }],
  };
}
type PlatformDocument = ReturnType<typeof platformDocument>;
type Entry = PlatformDocument['merchants'][number];

async function merchantCount(): Promise<number> {
  return (await h.db.current.database.db.select({ n: count() }).from(merchants))[0]!.n;
}

describe("import: the platform's merchant fields", () => {
  it('imports v1 and v2 fields, checked and compact, and GET answers them in both generations', async () => {
    const app = await h.app();
    const doc = platformDocument();
    await app.services.importer.importDocument(doc);
    const { access_token } = await loginAs(app, { user: 'ops@acme.test', password: 'a-long-password' });
    const answer = await app.inject({ url: `/v1/merchants/${doc.merchants[0]!.id}`, headers: bearer(access_token) });
    assert.equal(answer.statusCode, 200, answer.body);
    const m = json(answer);
    assert.deepEqual(m.tax, { id: EXAMPLE_TAX.number, type: 'RESPONSABLE_INSCRIPTO' });
    assert.deepEqual(m.tax_identification, EXAMPLE_TAX);
    assert.equal(m.phone, '+54 221 555 0199');
    assert.equal(m.activity, 'Cafetería');
    assert.equal(m.category, '5814');
    assert.deepEqual(m.settlement_condition, { transaction_fee: '3.5', settlement: 'T+1', cbu_or_cvu: CBU });
    assert.deepEqual(m.representative.representative_id, { type: 'DNI', number: '26756539' });
    assert.deepEqual(m.representative.identification, { type: 'DNI', number: '26756539' });
    assert.equal(m.representative.birth_date, '1978-05-21');
    assert.deepEqual(m.financial_info, { tax_condition: 'RESPONSABLE_INSCRIPTO', iibb: 'exento' });
    assert.deepEqual(m.address.location, EXAMPLE_ADDRESS.location);

    // The same file again changes nothing; a later file that leaves the fields out keeps them.
    await app.services.importer.importDocument(doc);
    const { id, customer_id } = doc.merchants[0]!;
    await app.services.importer.importDocument({ merchants: [{ id, customer_id, merchant_code: 'A-1' }] });
    const kept = json(await app.inject({ url: `/v1/merchants/${id}`, headers: bearer(access_token) }));
    assert.deepEqual({ ...kept, merchant_code: null, update_date: m.update_date }, m);
  });

  const refused: Array<[string, (e: Entry) => void, string, RegExp]> = [
    [
      'a CBU whose check digit is wrong',
      (e) => (e.settlement_condition.cbu_or_cvu = '2850590940090418135202'),
      'settlement_condition.cbu_or_cvu',
      /check digit/i,
    ],
    ['a CUIT whose check digit is wrong', (e) => (e.tax.id = '30712345672'), 'tax.id', /./],
    [
      'a zip of the wrong length for Argentina',
      (e) => (e.address = { ...EXAMPLE_ADDRESS, zip: '1900' }),
      'address.zip',
      /8/,
    ],
    [
      'tax.type that disagrees with financial_info.tax_condition',
      (e) => (e.financial_info.tax_condition = 'MONOTRIBUTO'),
      'tax.type',
      /must agree with financial_info.tax_condition/,
    ],
    [
      'a representative with no document',
      (e) => {
        const { representative_id: _, ...person } = e.representative;
        e.representative = person as Entry['representative'];
      },
      'representative.identification',
      /is required/,
    ],
    [
      'a birth date that is no date',
      (e) => (e.representative.birth_date = '21/05/1978'),
      'representative.birth_date',
      /date/,
    ],
    ['a phone that is no phone', (e) => (e.phone = 'call me'), 'phone', /phone/],
  ];
  for (const [name, spoil, field, message] of refused) {
    it(`refuses ${name}, naming $.merchants[0].${field}, and writes nothing`, async () => {
      const app = await h.app();
      const before = await merchantCount();
      const doc = platformDocument();
      spoil(doc.merchants[0]!);
      await assert.rejects(app.services.importer.importDocument(doc), (err: unknown) => {
        assert.ok(err instanceof ImportError, String(err));
        assert.equal(err.path, `$.merchants[0].${field}`);
        assert.match(err.reason, message);
        return true;
      });
      assert.equal(await merchantCount(), before);
    });
  }

  it('refuses v1 tax without the country it must fit', async () => {
    const app = await h.app();
    const doc = platformDocument();
    const { country: _, ...entry } = doc.merchants[0]!;
    await assert.rejects(
      app.services.importer.importDocument({ ...doc, merchants: [entry] }),
      (err: unknown) => err instanceof ImportError && err.path === '$.merchants[0].country',
    );
    assert.equal(await merchantCount(), 0);
  });
});
