/** Back-office users for tests: a confirmed login user of a role, and a real SMTP server on loopback. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { SMTPServer } from 'smtp-server';
import { bearer, json } from './app.js';

/** The password a confirmed user chose. */
export const STRONG = 'mauve tractor juggles seven owls';

/** A login user of `role`, created by `admin` and confirmed with STRONG: its id and access token. */
export async function userWithRole(app: FastifyInstance, admin: string, email: string, role = 'MEMBER') {
  const created = await app.inject({
    method: 'POST',
    url: '/v1/users',
    headers: bearer(admin),
    payload: { email, role },
  });
  assert.equal(created.statusCode, 201, created.body);
  const first = json(
    await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: email, password: json(created).temporary_password },
    }),
  );
  const done = await app.inject({
    method: 'POST',
    url: '/v1/login/challenge',
    payload: { name: 'NEW_PASSWORD_REQUIRED', session: first.challenge.session, new_password: STRONG },
  });
  assert.equal(done.statusCode, 200, done.body);
  return { id: json(created).attributes.id as string, token: json(done).token.access_token as string };
}

/** A real SMTP server on loopback that keeps every message it receives in `received`. */
export function smtpServer(received: string[]): SMTPServer {
  return new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      let text = '';
      stream.on('data', (chunk) => (text += chunk));
      stream.on('end', () => {
        received.push(text);
        callback();
      });
    },
  });
}
