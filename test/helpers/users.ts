/** Back-office users made through the API, as an ADMIN adds them and they first log in; a real SMTP server on loopback. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { SMTPServer } from 'smtp-server';
import { bearer, json } from './app.js';

/** The password every such user chooses at its first login. */
export const STRONG = 'mauve tractor juggles seven owls';

export async function createUser(app: FastifyInstance, admin: string, body: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: '/v1/users', headers: bearer(admin), payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return json(res);
}

/** A confirmed login user of `role`, created by `admin` and confirmed with STRONG: its id and access token. */
export async function userWithRole(app: FastifyInstance, admin: string, email: string, role = 'MEMBER') {
  const created = await createUser(app, admin, { email, role });
  const first = json(
    await app.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { user: email, password: created.temporary_password },
    }),
  );
  const done = await app.inject({
    method: 'POST',
    url: '/v1/login/challenge',
    payload: { name: 'NEW_PASSWORD_REQUIRED', session: first.challenge.session, new_password: STRONG },
  });
  assert.equal(done.statusCode, 200, done.body);
  return { id: created.attributes.id as string, token: json(done).token.access_token as string };
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

/** The caller's customer's audit trail, up to 1,000 records. */
export async function auditActions(app: FastifyInstance, token: string) {
  const res = await app.inject({ method: 'GET', url: '/v1/audit-events?size=1000', headers: bearer(token) });
  return json(res);
}
