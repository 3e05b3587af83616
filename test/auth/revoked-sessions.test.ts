/** Revoked logins in memory, and the database while pushed notices may be missed. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { authSessions } from '../../src/db/schema.js';
import { createAuthDal } from '../../src/features/auth/auth-dal.js';
import { createRevokedSessions } from '../../src/features/auth/revoked-sessions.js';
import { useTestApp } from '../helpers/app.js';
import { loginAs, seedWorld } from '../helpers/fixtures.js';
import { testSealedValues } from '../helpers/secrets.js';

const h = useTestApp();

/** Revokes in the database only, as if the NOTIFY had been lost. */
async function revokeSilently(sessionId: string) {
  await h.db.current.database.db
    .update(authSessions)
    .set({ revokedAt: sql`now()` })
    .where(eq(authSessions.id, sessionId));
}

describe('revoked logins', () => {
  it('asks the database while disconnected, trusts memory only after loading it, and reloads on reconnection', async () => {
    const app = await h.app();
    const world = await seedWorld(app);
    const sid = (token: string) => String(decodeJwt(token).sid);
    const first = sid((await loginAs(app, world.login)).access_token);
    const second = sid((await loginAs(app, world.login)).access_token);
    const dal = createAuthDal(h.db.current.database.db, testSealedValues());
    let reads = 0;
    const revoked = createRevokedSessions({
      ttlMs: 3_600_000,
      loadRevokedSince: (since) => dal.listRevokedSessionIds(since),
      isRevokedInDatabase: (id) => {
        reads++;
        return dal.isSessionRevoked(id);
      },
    });

    await revokeSilently(first);
    assert.equal(await revoked.isRevoked(first), true, 'disconnected: the database answers');
    assert.equal(await revoked.isRevoked(second), false);
    assert.equal(reads, 2);

    await revoked.setConnected(true);
    assert.equal(await revoked.isRevoked(first), true, 'loaded at connection');
    assert.equal(await revoked.isRevoked(second), false);
    assert.equal(reads, 2, 'connected: no database read');

    revoked.add(second);
    assert.equal(await revoked.isRevoked(second), true, 'a pushed revocation counts at once');

    const third = sid((await loginAs(app, world.login)).access_token);
    await revokeSilently(third);
    await revoked.setConnected(false);
    assert.equal(await revoked.isRevoked(third), true, 'channel down: a missed notice cannot hide a revocation');
    await revoked.setConnected(true);
    const readsBefore = reads;
    assert.equal(await revoked.isRevoked(third), true, 'reloaded on reconnection');
    assert.equal(reads, readsBefore);
  });
});
