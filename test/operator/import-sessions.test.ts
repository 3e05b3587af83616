/**
 * A re-import that changes a login user's role or password ends that user's
 * sessions, as the users API does (README, "import"); one that repeats them
 * changes nothing, so running the same file again logs no one out.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { desc, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { auditEvents, users } from '../../src/db/schema.js';
import { ImportError } from '../../src/errors.js';
import type { ImportDocument } from '../../src/features/operator/import-schema.js';
import { bearer, secondInstance, useTestApp } from '../helpers/app.js';
import { loginAs, uuid } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

const CUSTOMER = uuid('c');
const OPS = { user: 'ops@acme.test', password: 'a-long-password' };

/** One customer and its login user, with `changes` to that user. */
function documentWith(changes: { role?: 'ADMIN' | 'MEMBER' | 'VIEWER'; password?: string } = {}): ImportDocument {
  return {
    customers: [{ id: CUSTOMER, name: 'Acme' }],
    users: [{ email: OPS.user, type: 'CUSTOMER', customer_id: CUSTOMER, password: OPS.password, ...changes }],
  };
}

const me = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
const refresh = (app: FastifyInstance, refreshToken: string) =>
  app.inject({ method: 'POST', url: '/v1/login/refresh', payload: { refresh_token: refreshToken } });

async function storedUser() {
  const [row] = await h.db.current.database.db
    .select({ role: users.role, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.email, OPS.user));
  return row!;
}

async function lastImportAudit() {
  const [row] = await h.db.current.database.db
    .select({ details: auditEvents.details })
    .from(auditEvents)
    .where(eq(auditEvents.action, 'operator.import'))
    .orderBy(desc(auditEvents.occurredAt))
    .limit(1);
  return row!.details as Record<string, unknown>;
}

/** The app with the user imported and logged in once. */
async function loggedIn() {
  const app = await h.app();
  await app.services.importer.importDocument(documentWith());
  return { app, session: await loginAs(app, OPS) };
}

describe('import: the sessions of a login user it changes', () => {
  it('keeps every session and the stored hash when the file repeats the password and role', async () => {
    const { app, session } = await loggedIn();
    const before = await storedUser();
    await app.services.importer.importDocument(documentWith());
    assert.deepEqual(await storedUser(), before);
    assert.equal((await me(app, session.access_token)).statusCode, 200);
    assert.equal((await refresh(app, session.refresh_token)).statusCode, 200);
    assert.equal((await lastImportAudit()).sessions_ended, 0);
  });

  it('ends the sessions of a user whose role it changes; the next login carries the new role', async () => {
    const { app, session } = await loggedIn();
    await app.services.importer.importDocument(documentWith({ role: 'VIEWER' }));
    assert.equal((await me(app, session.access_token)).statusCode, 401);
    assert.equal((await refresh(app, session.refresh_token)).statusCode, 401);
    assert.equal((await lastImportAudit()).sessions_ended, 1);
    const again = await loginAs(app, OPS);
    const claims = JSON.parse(Buffer.from(again.access_token.split('.')[1]!, 'base64url').toString('utf8'));
    assert.equal(claims.role, 'VIEWER');
  });

  it('ends the sessions of a user whose password it changes; only the new password logs in', async () => {
    const { app, session } = await loggedIn();
    await app.services.importer.importDocument(documentWith({ password: 'another-long-password' }));
    assert.equal((await me(app, session.access_token)).statusCode, 401);
    assert.equal((await refresh(app, session.refresh_token)).statusCode, 401);
    const old = await app.inject({ method: 'POST', url: '/v1/login', payload: OPS });
    assert.equal(old.statusCode, 401);
    await loginAs(app, { user: OPS.user, password: 'another-long-password' });
  });

  it('ends them on a running instance when another process imports', async () => {
    const { app: server, session } = await loggedIn();
    // The command line's process: its own instance on the same database.
    const commandLine = await secondInstance(h);
    try {
      await commandLine.services.importer.importDocument(documentWith({ role: 'MEMBER' }));
      await waitFor(
        async () => (await me(server, session.access_token)).statusCode === 401,
        'the running instance refused the token',
        { timeoutMs: 1000 },
      );
      assert.equal((await refresh(server, session.refresh_token)).statusCode, 401);
    } finally {
      await commandLine.close();
    }
  });

  it('ends no session and changes no role when the file is refused', async () => {
    const { app, session } = await loggedIn();
    const other = uuid('c');
    await app.services.importer.importDocument({
      customers: [{ id: other, name: 'Other' }],
      users: [{ email: 'taken@other.test', type: 'CUSTOMER', customer_id: other, password: 'a-long-password' }],
    });
    const before = await storedUser();
    const refused = documentWith({ role: 'VIEWER' });
    // A login e-mail of another customer: the whole file is refused.
    refused.users!.push({
      email: 'taken@other.test',
      type: 'CUSTOMER',
      customer_id: CUSTOMER,
      password: 'x-long-password',
    });
    await assert.rejects(app.services.importer.importDocument(refused), ImportError);
    assert.deepEqual(await storedUser(), before);
    assert.equal((await me(app, session.access_token)).statusCode, 200);
    assert.equal((await refresh(app, session.refresh_token)).statusCode, 200);
  });
});
