/**
 * Access tokens are JWTs (RFC 9068 profile, header typ "at+jwt") signed with
 * Ed25519 keys kept in the database, so that every instance signs and verifies
 * alike and tokens survive restarts. The JOSE work is jose's; this module only
 * keeps the key ring and says which claims a token carries.
 */
import { randomUUID } from 'node:crypto';
import {
  type CryptoKey,
  type JWK,
  SignJWT,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
} from 'jose';
import { UnauthorizedError } from '../../errors.js';
import { ROLES, type Role, type UserType } from '../../lib/principal.js';
import type { NewSigningKey, SigningKeysDal } from './signing-keys-dal.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
export type { AuthMethod } from '../../db/schema.js';
import type { AuthMethod } from '../../db/schema.js';
import { OPERATOR_CONTEXT, SYSTEM_CONTEXT } from '../../lib/change-context.js';
import { signingKeysNotice } from './auth-change-feed.js';

const ALGORITHM = 'EdDSA';
const TOKEN_TYPE = 'at+jwt';
/** An unknown kid may be a key rotated elsewhere whose notice was missed: look again, at most this often. */
const UNKNOWN_KID_RELOAD_MS = 1000;
/**
 * Tokens already verified, by their exact text, until they expire: an Ed25519
 * verification costs more than the rest of a cheap request, and a client sends
 * the same token for an hour. Revocation is checked on every request regardless.
 */
const VERIFIED_CACHE_SIZE = 50_000;

export type VerifiedAccess = AccessClaims & { jti: string; exp: number };

export interface AccessClaims {
  /** The user. */
  sub: string;
  /** The login family (auth_sessions.id): logout and refresh-token reuse revoke it. */
  sid: string;
  user_type: UserType;
  customer_id: string;
  /** What the user may do (docs/api.md, "Users and roles"): checked from the token, no database read. */
  role: Role;
  /** How the login was established (RFC 8176): `["pwd"]`, or `["pwd", "otp"]` with a one-time code. */
  amr: AuthMethod[];
}

const AUTH_METHODS: readonly string[] = ['pwd', 'otp'] satisfies AuthMethod[];
/** Tokens signed before `amr` existed came from logins with the password alone. */
const PASSWORD_ONLY: AuthMethod[] = ['pwd'];

export interface SignedAccessToken {
  token: string;
  jti: string;
}

/** A public key as published in the JWK Set. */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

interface RingKey {
  kid: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  signKey: CryptoKey | null;
  retiredAt: Date | null;
}

export interface AccessTokensDeps {
  dal: Pick<SigningKeysDal, 'listVerifying'>;
  uow: UnitOfWork<{ signingKeys: SigningKeysDal }>;
  issuer: string;
  ttlSeconds: number;
  now?: () => Date;
}

const invalidToken = () => new UnauthorizedError('invalid_token');

/** A fresh Ed25519 key pair as stored; its kid is the RFC 7638 thumbprint of the public key. */
export async function newSigningKey(): Promise<NewSigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(ALGORITHM, { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return { kid, algorithm: ALGORITHM, publicJwk: { ...publicJwk }, privateJwk: { ...(await exportJWK(privateKey)) } };
}

/** A private key that did not open (logged by the data layer) signs nothing. */
async function importSigning(jwk: JWK | null): Promise<CryptoKey | null> {
  return jwk === null ? null : ((await importJWK(jwk, ALGORITHM)) as CryptoKey);
}

export function createAccessTokens(deps: AccessTokensDeps) {
  const now = deps.now ?? (() => new Date());
  let ring = new Map<string, RingKey>();
  let signing: RingKey | undefined;
  let lastReload = 0;
  const verified = new Map<string, VerifiedAccess>();

  /** A retired key verifies while tokens it signed may still be alive. */
  const verifies = (key: RingKey) =>
    key.retiredAt === null || key.retiredAt.getTime() + deps.ttlSeconds * 1000 > now().getTime();

  async function reload(): Promise<void> {
    lastReload = Date.now();
    const rows = await deps.dal.listVerifying(new Date(now().getTime() - deps.ttlSeconds * 1000));
    const next = new Map<string, RingKey>();
    for (const row of rows) {
      const known = ring.get(row.kid);
      const key: RingKey = known
        ? { ...known, retiredAt: row.retiredAt }
        : {
            kid: row.kid,
            publicJwk: row.publicJwk as JWK,
            verifyKey: (await importJWK(row.publicJwk as JWK, ALGORITHM)) as CryptoKey,
            signKey: row.retiredAt === null ? await importSigning(row.openPrivateJwk()) : null,
            retiredAt: row.retiredAt,
          };
      next.set(row.kid, key);
    }
    ring = next;
    signing = [...next.values()].find((k) => k.retiredAt === null && k.signKey !== null);
  }

  async function keyFor(kid: unknown): Promise<RingKey> {
    if (typeof kid !== 'string') throw invalidToken();
    let key = ring.get(kid);
    if (!key && Date.now() - lastReload >= UNKNOWN_KID_RELOAD_MS) {
      await reload();
      key = ring.get(kid);
    }
    if (!key || !verifies(key)) throw invalidToken();
    return key;
  }

  /** Adds a key that signs from now on; the previous one verifies until its tokens expire. */
  async function rotate(): Promise<string> {
    const key = await newSigningKey();
    await deps.uow.write(OPERATOR_CONTEXT, async ({ dal: { signingKeys }, notify }) => {
      await signingKeys.replaceSigning(key);
      await notify(signingKeysNotice());
    });
    await reload();
    return key.kid;
  }

  return {
    /** Loads the keys; on an empty table makes the first one (safe when instances start at once). */
    async start(): Promise<void> {
      await reload();
      if (!signing) {
        const first = await newSigningKey();
        await deps.uow.write(SYSTEM_CONTEXT, ({ dal }) => dal.signingKeys.insertFirst(first));
        await reload();
      }
      // The signing key's private part did not open (tampered): a new key signs, the old one verifies.
      if (!signing && [...ring.values()].some((k) => k.retiredAt === null)) await rotate();
      if (!signing) throw new Error('no signing key after creating one');
    },

    reload,
    rotate,

    async sign(claims: AccessClaims): Promise<SignedAccessToken> {
      if (!signing) throw new Error('access tokens: start() was not called');
      const jti = randomUUID();
      const iat = Math.floor(now().getTime() / 1000);
      const token = await new SignJWT({
        user_type: claims.user_type,
        customer_id: claims.customer_id,
        sid: claims.sid,
        role: claims.role,
        amr: claims.amr,
      })
        .setProtectedHeader({ alg: ALGORITHM, typ: TOKEN_TYPE, kid: signing.kid })
        .setIssuer(deps.issuer)
        .setSubject(claims.sub)
        .setIssuedAt(iat)
        .setExpirationTime(iat + deps.ttlSeconds)
        .setJti(jti)
        .sign(signing.signKey!);
      return { token, jti };
    },

    /** The claims of a token this service signed, still live; otherwise 401 invalid_token. */
    async verify(token: string): Promise<VerifiedAccess> {
      const known = verified.get(token);
      if (known) {
        if (known.exp * 1000 > now().getTime()) return known;
        verified.delete(token);
      }
      try {
        const { payload } = await jwtVerify(token, async (header) => (await keyFor(header.kid)).verifyKey, {
          algorithms: [ALGORITHM],
          issuer: deps.issuer,
          typ: TOKEN_TYPE,
          requiredClaims: ['sub', 'jti', 'iat', 'exp', 'sid', 'user_type', 'customer_id'],
          currentDate: now(),
          clockTolerance: 0,
        });
        const { sub, sid, user_type, customer_id, jti, exp } = payload;
        // Tokens signed before roles existed carry none: their users all became ADMIN (migration 0010).
        const role = payload.role ?? 'ADMIN';
        const amr = payload.amr ?? PASSWORD_ONLY;
        if (
          !ROLES.includes(role as Role) ||
          !Array.isArray(amr) ||
          !amr.every((method) => AUTH_METHODS.includes(method)) ||
          typeof sid !== 'string' ||
          typeof customer_id !== 'string' ||
          (user_type !== 'CUSTOMER' && user_type !== 'MERCHANT')
        ) {
          throw invalidToken();
        }
        const claims: VerifiedAccess = {
          sub: sub!,
          sid,
          user_type,
          customer_id,
          role: role as Role,
          amr: amr as AuthMethod[],
          jti: jti!,
          exp: exp!,
        };
        // Oldest first out: a Map iterates in insertion order.
        if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
        verified.set(token, claims);
        return claims;
      } catch {
        throw invalidToken();
      }
    },

    /** Public keys of every key that can still verify a live token. */
    jwks(): { keys: PublicJwk[] } {
      return {
        keys: [...ring.values()]
          .filter(verifies)
          .map((k) => ({ kty: 'OKP', crv: 'Ed25519', x: k.publicJwk.x!, kid: k.kid, alg: ALGORITHM, use: 'sig' })),
      };
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
