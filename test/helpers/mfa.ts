/** TOTP enrolment as a user does it, for tests whose subject is what comes after. */
import type { FastifyInstance } from 'fastify';
import { totpCode } from '../../src/features/credentials/totp.js';
import { bearer, json } from './app.js';

/** Starts TOTP enrolment for the caller (with the step-up's current password) and answers the pending secret. */
export async function startTotp(app: FastifyInstance, token: string, password: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/users/me/mfa/totp',
    headers: bearer(token),
    payload: { current_password: password },
  });
  if (res.statusCode !== 200) throw new Error(`TOTP enrolment failed: ${res.statusCode} ${res.body}`);
  return json(res).secret as string;
}

/** TOTP turned on for the caller (the code of now verified, so spent): the secret and the recovery codes. */
export async function enableTotp(app: FastifyInstance, token: string, password: string) {
  const secret = await startTotp(app, token, password);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/users/me/mfa/totp/verify',
    headers: bearer(token),
    payload: { code: totpCode(secret) },
  });
  if (res.statusCode !== 200) throw new Error(`TOTP verification failed: ${res.statusCode} ${res.body}`);
  return { secret, recoveryCodes: json(res).recovery_codes as string[] };
}
