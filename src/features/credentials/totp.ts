/**
 * Two-factor codes (TOTP, RFC 6238: SHA-1, 6 digits, 30-second steps), with
 * otpauth doing the cryptography. A code is accepted one step either side of
 * now (clock drift) and answers its step, so that the caller can refuse any
 * step not later than the last one accepted: no code works twice.
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { sha256Hex } from '../../lib/secrets.js';

const PERIOD_SECONDS = 30;
const DIGITS = 6;
const RECOVERY_CODES = 10;
const CODE = /^[0-9]{6}$/;

const totpOf = (secret: string, label = '', issuer = '') =>
  new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD_SECONDS,
  });

/** A new 160-bit secret, base32 as authenticator apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URL an authenticator app reads from a QR code. */
export function otpauthUrl(secret: string, email: string, issuer: string): string {
  return totpOf(secret, email, issuer).toString();
}

/** The time step of `code` when it is the code of `secret` within one step of `at`; otherwise null. */
export function totpStep(secret: string, code: string, at = Date.now()): number | null {
  if (!CODE.test(code)) return null;
  const delta = totpOf(secret).validate({ token: code, timestamp: at, window: 1 });
  return delta === null ? null : Math.floor(at / 1000 / PERIOD_SECONDS) + delta;
}

/** The code of `secret` now (the command line and tests use it). */
export function totpCode(secret: string, at = Date.now()): string {
  return totpOf(secret).generate({ timestamp: at });
}

/** How a recovery code is compared and stored: its SHA-256, whatever its case, dashes and spaces. */
export function recoveryCodeHash(code: string): string {
  return sha256Hex(code.replace(/[\s-]/g, '').toLowerCase());
}

/** Ten single-use recovery codes (40 random bits each), shown once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const text = randomBytes(8).toString('hex').slice(0, 10);
    return `${text.slice(0, 5)}-${text.slice(5)}`;
  });
}
