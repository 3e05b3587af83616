/**
 * POST /v1/users in the platform's request shape, CreateUserRequest
 * (contract section 20): `{ user_type, attributes: { email, customer_id,
 * name? } }`. Every refusal writes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { auditEvents, users } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';

const h = useTestApp();

async function written(): Promise<string> {
  const db = h.db.current.database.db;
  const [[u], [a]] = await Promise.all([
    db.select({ n: count() }).from(users),
    db.select({ n: count() }).from(auditEvents),
  ]);
  return JSON.stringify([u!.n, a!.n]);
}

describe("POST /v1/users: the platform's CreateUserRequest", () => {
  it('creates a login user of the caller from user_type and attributes', async () => {
    const { app, world, token } = await customerSession(h);
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: bearer(token),
      payload: {
        user_type: 'CUSTOMER',
        attributes: { email: 'Nueva@Alpha.test', customer_id: world.customerId, name: 'Nueva' },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const user = json(res);
    assert.equal(user.attributes.email, 'nueva@alpha.test');
    assert.equal(user.attributes.name, 'Nueva');
    assert.equal(user.attributes.type, 'CUSTOMER');
    assert.equal(user.attributes.role, 'MEMBER');
    assert.equal(typeof user.temporary_password, 'string');
  });

  it('refuses each wrong shape, naming the field, writing nothing', async () => {
    const { app, world, token } = await customerSession(h);
    const before = await written();
    for (const [payload, status, field] of [
      [
        { user_type: 'MERCHANT', attributes: { email: 'm@alpha.test', customer_id: world.customerId } },
        400,
        'user_type',
      ],
      [{ user_type: 'CUSTOMER', attributes: { email: 'x@alpha.test' } }, 400, 'attributes.customer_id'],
      [{ user_type: 'CUSTOMER', attributes: { customer_id: world.customerId } }, 400, 'attributes.email'],
      [
        {
          email: 'y@alpha.test',
          user_type: 'CUSTOMER',
          attributes: { email: 'y@alpha.test', customer_id: world.customerId },
        },
        400,
        'email',
      ],
      [{ user_type: 'CUSTOMER' }, 400, 'email'],
      [{ user_type: 'ADMIN', attributes: { email: 'z@alpha.test', customer_id: world.customerId } }, 400, 'user_type'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/v1/users', headers: bearer(token), payload });
      assert.equal(res.statusCode, status, res.body);
      assert.ok(
        json(res).errors.some((e: { field: string }) => e.field === field),
        `${field}: ${res.body}`,
      );
    }
    const merchant = await app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: bearer(token),
      payload: { user_type: 'MERCHANT', attributes: { email: 'm@alpha.test', customer_id: world.customerId } },
    });
    assert.match(json(merchant).errors[0].message, /API keys/);
    assert.equal(await written(), before, 'nothing written');
  });

  it("answers 404 customer_not_found for another customer's customer_id, writing nothing", async () => {
    const { app, world, token } = await customerSession(h);
    const before = await written();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: bearer(token),
      payload: { user_type: 'CUSTOMER', attributes: { email: 'q@alpha.test', customer_id: world.otherCustomerId } },
    });
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(json(res).code, 'customer_not_found');
    assert.equal(await written(), before, 'nothing written');
  });
});
