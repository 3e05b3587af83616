/** Helpers for merchant tests: valid bodies for each country, the endpoints, and what the tables hold. */
import { asc } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { auditEvents, domainEvents, merchants } from '../../src/db/schema.js';

/** Valid CUITs (check digit holds) and RFCs (format, date and check character hold). */
export const CUITS = ['30712345671', '20267565393', '27123456780', '30500010912'];
export const RFCS = ['GODE561231GR8', 'MAB9307148T4'];

export function argentineMerchant(customerId: string, overrides: Record<string, unknown> = {}) {
  return {
    customer_id: customerId,
    country: 'ARG',
    legal_type: 'LEGAL_ENTITY',
    business_name: 'Cafetería La Plata S.A.',
    fantasy_name: 'Café 7',
    address: { state: 'Buenos Aires', city: 'La Plata', zip: 'B1900AAA', street: 'Calle 7', number: '1234' },
    tax_identification: { type: 'CUIT', number: '30-71234567-1' },
    ...overrides,
  };
}

export function mexicanMerchant(customerId: string, overrides: Record<string, unknown> = {}) {
  return {
    customer_id: customerId,
    country: 'MEX',
    legal_type: 'NATURAL_PERSON',
    business_name: 'Eduardo González',
    fantasy_name: 'Tacos Lalo',
    email: 'lalo@example.mx',
    merchant_code: 'MX-1',
    address: {
      state: 'CDMX',
      city: 'Ciudad de México',
      zip: '06700',
      street: 'Av. Álvaro Obregón',
      number: '12',
      apartment: '3',
    },
    tax_identification: { type: 'RFC', number: 'gode-561231-gr8' },
    representative: {
      type: 'PROXY',
      name: 'Lucía',
      surname: 'Pérez',
      identification: { type: 'CURP', number: 'PEXL800101MDFRZC09' },
      email: 'lucia@example.mx',
      phone: '+52 55 5555 0100',
    },
    additional_info: 'Solo efectivo los domingos',
    ...overrides,
  };
}

/** A merchant made before the platform's fields, as the API answers it: its name, ACTIVE, nulls; changed when made. */
export function merchantWithNameOnly(m: { id: string; customer_id: string; name: string; create_date: string }) {
  return {
    id: m.id,
    customer_id: m.customer_id,
    name: m.name,
    business_name: null,
    fantasy_name: null,
    legal_type: null,
    country: null,
    merchant_code: null,
    email: null,
    status: 'ACTIVE',
    address: null,
    tax_identification: null,
    tax: null,
    representative: null,
    additional_info: null,
    phone: null,
    activity: null,
    category: null,
    settlement_condition: null,
    financial_info: null,
    create_date: m.create_date,
    update_date: m.create_date,
  };
}

export function createMerchant(app: FastifyInstance, headers: InjectOptions['headers'], body: unknown, version = 'v1') {
  return app.inject({ method: 'POST', url: `/${version}/merchants`, headers, payload: body as object });
}

export function patchMerchant(
  app: FastifyInstance,
  headers: InjectOptions['headers'],
  id: string,
  body: unknown,
  version = 'v1',
) {
  return app.inject({ method: 'PATCH', url: `/${version}/merchants/${id}`, headers, payload: body as object });
}

export function getMerchant(app: FastifyInstance, headers: InjectOptions['headers'], id: string) {
  return app.inject({ method: 'GET', url: `/v1/merchants/${id}`, headers });
}

/** Every merchant row, every audit record and every domain event: equal before and after means nothing was written. */
export async function merchantState(database: Database): Promise<string> {
  const db = database.db;
  const [rows, audits, events] = await Promise.all([
    db.select().from(merchants).orderBy(asc(merchants.id)),
    db.select().from(auditEvents).orderBy(asc(auditEvents.id)),
    db.select().from(domainEvents).orderBy(asc(domainEvents.id)),
  ]);
  return JSON.stringify({ rows, audits, events });
}
