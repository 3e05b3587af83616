/**
 * A replay sends no second mail (contract section 21): a new user and a reset
 * password, each sent three times with one Idempotency-Key, queue one mail each
 * in the outbox and reach a real SMTP server on loopback once.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { count } from 'drizzle-orm';
import { mailOutbox } from '../../src/db/schema.js';
import { bearer, json, useTestApp } from '../helpers/app.js';
import { customerSession } from '../helpers/fixtures.js';
import { smtpServer } from '../helpers/users.js';
import { waitFor } from '../helpers/wait.js';

const h = useTestApp();

describe('Idempotency-Key: mail', () => {
  it('a new user and a password reset, each retried twice with its key, mail once each', async () => {
    // The port is taken, then let go: while nobody listens, every queued mail stays in the outbox to be counted.
    const received: string[] = [];
    const taken = smtpServer(received);
    taken.listen(0, '127.0.0.1');
    await once(taken.server, 'listening');
    const port = (taken.server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => taken.close(() => resolve()));
    const smtpUrl = `smtp://127.0.0.1:${port}`;
    const { app, token } = await customerSession(h, { smtpUrl, smtpFrom: 'feegate <noreply@alpha.test>' });
    const db = h.db.current.database.db;
    const queued = async () => (await db.select({ n: count() }).from(mailOutbox))[0]!.n;
    const sent = (recipient: string) => received.filter((mail) => mail.includes(recipient));
    const send = (url: string, key: string, payload?: object) =>
      app.inject({
        method: 'POST',
        url,
        headers: { ...bearer(token), 'idempotency-key': key } as Record<string, string>,
        ...(payload ? { payload } : {}),
      });

    const created = await send('/v1/users', 'new-user', { email: 'new@alpha.test' });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(await queued(), 1, 'the temporary password is queued');
    for (const _ of [1, 2])
      assert.equal((await send('/v1/users', 'new-user', { email: 'new@alpha.test' })).body, created.body);
    assert.equal(await queued(), 1, 'the replays queue nothing');

    const reset = `/v1/users/${json(created).attributes.id}/reset-password`;
    const first = await send(reset, 'reset');
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(await queued(), 2);
    for (const _ of [1, 2]) {
      const replay = await send(reset, 'reset');
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
    }
    assert.equal(await queued(), 2, 'the replays queue nothing');

    const server = smtpServer(received);
    server.listen(port, '127.0.0.1');
    await once(server.server, 'listening');
    try {
      // Sent mail is deleted once the server took it: an empty outbox means every mail has arrived.
      await waitFor(async () => (await queued()) === 0, 'the outbox was sent', { timeoutMs: 60_000, intervalMs: 200 });
      assert.equal(sent('new@alpha.test').length, 2, 'one temporary password, one reset: no mail twice');
      assert.equal(received.length, 2);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
