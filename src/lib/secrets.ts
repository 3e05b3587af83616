import { createHash, randomBytes } from 'node:crypto';

/** SHA-256 hex digest: how every token and key is stored and looked up. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** An opaque bearer secret: a readable prefix and 256 bits from the CSPRNG. */
export function opaqueToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}
