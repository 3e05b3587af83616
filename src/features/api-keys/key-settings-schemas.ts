/**
 * A key's settings as requests send them and records show them: name, expiry,
 * access, rate limit, permissions and allowed addresses. api-keys-schemas.ts
 * makes the keys' requests and answers of them; key-settings.ts reads them.
 */
import { Type } from '@sinclair/typebox';
import { MAX_ALLOWED_IPS } from '../../lib/allowed-ips.js';
import { PERMISSIONS } from '../../lib/permissions.js';
import { InstantText, Nullable, Pattern, Timestamp } from '../../schemas/common.js';

export const MAX_KEY_LIFETIME_YEARS = 5;

export const Name = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: Pattern(
    '^[^\\u0000-\\u001F\\u007F\\uD800-\\uDFFF]+$',
    'must not contain control characters or an unpaired UTF-16 surrogate',
  ),
  description: 'A label for people, 1..64 characters, no control characters',
});
export const ExpiresAt = InstantText(
  `When the key stops working: in the future, at most ${MAX_KEY_LIFETIME_YEARS} years ahead`,
);
export const Access = Type.Union([Type.Literal('full'), Type.Literal('read_only')], {
  description: 'read_only keys may use GET operations only',
});
export const RateLimit = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100_000, description: 'Requests allowed per window' }),
    window_seconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'Length of the window in seconds' }),
  },
  { additionalProperties: false },
);

export const Permissions = Type.Array(Type.Union(PERMISSIONS.map((p) => Type.Literal(p))), {
  maxItems: PERMISSIONS.length,
  description:
    'What the key may do, from the catalogue: api_keys, merchants, fee_rules (plans, the catalogue, assignments, timelines, scheduled changes, quotes) and webhooks, each :read or :write; users:read; audit:read. Each operation names the one it needs (x-feegate-permission).',
});
// The address rules are ipaddr.js's, checked by the service so a 400 can name the item; the pattern keeps out what is no text.
const AllowedIp = Type.String({
  pattern: Pattern('^[\\x21-\\x7E]+$', 'must be an IPv4 or IPv6 address or CIDR range'),
  examples: ['203.0.113.0/24'],
});
export const AllowedIps = Type.Array(AllowedIp, {
  maxItems: MAX_ALLOWED_IPS,
  description: `Up to ${MAX_ALLOWED_IPS} IPv4 or IPv6 addresses or CIDR ranges the key may be used from; empty: any address. The client address is the one TRUST_PROXY determines; an IPv4-mapped IPv6 client (::ffff:10.0.0.1) is its IPv4 address. Stored and shown in canonical form (a range by its network address).`,
});

/** What every key record carries about its lifecycle (null when unset). */
export const lifecycleFields = {
  name: Nullable(Type.String(), 'null when unset'),
  expires_at: Nullable(Timestamp, 'null: the key does not expire'),
  access: Access,
  rate_limit: Nullable(RateLimit, 'null: no limit of its own'),
  permissions: { ...Permissions, description: 'What the key may do (contract section 22), in catalogue order' },
  allowed_ips: { ...AllowedIps, description: 'Where the key may be used from, canonical; empty: any address' },
};

/** Those fields in the examples of the requests and answers. */
export const LIFECYCLE_EXAMPLE = {
  name: 'POS terminals, store 12',
  expires_at: '2027-11-23T00:00:00.000Z',
  access: 'full',
  rate_limit: { limit: 600, window_seconds: 60 },
  permissions: ['merchants:read', 'fee_rules:read', 'fee_rules:write'],
  allowed_ips: ['203.0.113.0/24', '2001:db8::/32'],
};
