/**
 * The hot path of every request made with an API key: its hash verified once
 * and cached (dropped on any change of the key, pushed to every instance), its
 * expiry and merchant checked on every use, its use recorded in batches.
 */
import { ForbiddenError, UnauthorizedError } from '../../errors.js';
import { parseAllowedIps } from '../../lib/allowed-ips.js';
import type { Principal } from '../../lib/principal.js';
import { sha256Hex } from '../../lib/secrets.js';
import { isWellFormedApiKey } from './api-key-format.js';
import type { ApiKeysDal } from './api-keys-dal.js';
import type { KeyCaches } from './key-change-feed.js';
import type { LastUseRecorder } from './last-use-recorder.js';

export interface KeyAuthenticationDeps {
  dal: Pick<ApiKeysDal, 'findByHash'>;
  caches: KeyCaches;
  lastUse: LastUseRecorder;
}

const invalidKey = () => new UnauthorizedError('invalid_api_key');
const expiredKey = () => new UnauthorizedError('api_key_expired');

/** The caller an API key stands for, or the refusal of it. */
export function createKeyAuthentication(deps: KeyAuthenticationDeps): (apiKey: string) => Promise<Principal> {
  const { dal, caches, lastUse } = deps;
  return async function authenticate(apiKey: string): Promise<Principal> {
    if (!isWellFormedApiKey(apiKey)) throw invalidKey();
    const keyHash = sha256Hex(apiKey);
    let verified = caches.verifiedKeys.get(keyHash);
    if (!verified) {
      const token = caches.verifiedKeys.token(keyHash);
      const key = await dal.findByHash(keyHash);
      // A disabled integration user's keys are refused as if revoked, until it is enabled again.
      if (key?.status !== 'ENABLED' || !key.userEnabled) throw invalidKey();
      const principal: Principal = {
        auth: 'api_key',
        userId: key.userId,
        email: key.email,
        userType: key.merchantId ? 'MERCHANT' : 'CUSTOMER',
        customerId: key.customerId,
        merchantId: key.merchantId,
        sessionId: null,
        role: null,
        apiKeyId: key.id,
        readOnly: key.access === 'read_only',
        rateLimit:
          key.rateLimit === null
            ? null
            : {
                limit: key.rateLimit,
                windowSeconds: key.rateLimitWindowSeconds!,
                counter: key.rollChainId ?? key.id,
              },
        keyExpiresAt: key.expiresAt,
        // Parsed once here, so each request only looks up a set and matches ranges.
        permissions: new Set(key.permissions),
        allowedIps: key.allowedIps,
        allowedRanges: parseAllowedIps(key.allowedIps),
      };
      verified = {
        principal,
        expiresAt: key.expiresAt?.getTime() ?? null,
        merchantInactive: key.merchantStatus === 'INACTIVE',
      };
      caches.verifiedKeys.set(keyHash, keyHash, verified, token);
    }
    // Checked on every use: a cached key expires on time too.
    if (verified.expiresAt !== null && verified.expiresAt <= Date.now()) throw expiredKey();
    if (verified.merchantInactive) throw new ForbiddenError('merchant_inactive');
    lastUse.touch(verified.principal.apiKeyId!);
    return verified.principal;
  };
}
