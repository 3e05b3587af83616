/**
 * The key form (creation, shown once) and how a key's permissions read in the
 * listing: permissions chosen by resource (none / read / write) and allowed
 * addresses, as contract section 22 offers them.
 */
import { useState } from 'react';
import type { Schemas } from '../../clients/typescript/index';
import { ApiError, client, describeError, unwrap } from './api';
import { FormSubmit } from './ui';

type Permission = Schemas['CreateApiKeyRequest'] extends { permissions?: (infer P)[] } ? P : never;
type Level = 'none' | 'read' | 'write';

/** The catalogue by resource, in its order: users and the audit trail are only read. */
const RESOURCES: Array<{ name: string; label: string; levels: Level[] }> = [
  { name: 'api_keys', label: 'API keys', levels: ['none', 'read', 'write'] },
  { name: 'merchants', label: 'Merchants', levels: ['none', 'read', 'write'] },
  { name: 'fee_rules', label: 'Fee rules and plans', levels: ['none', 'read', 'write'] },
  { name: 'webhooks', label: 'Webhooks', levels: ['none', 'read', 'write'] },
  { name: 'users', label: 'Users', levels: ['none', 'read'] },
  { name: 'audit', label: 'Audit trail', levels: ['none', 'read'] },
];
const ALL_PERMISSIONS = RESOURCES.flatMap((r) => r.levels.filter((l) => l !== 'none').map((l) => `${r.name}:${l}`));

/** A resource at `level`: write includes read, as a key that may change a thing may look at it. */
const permissionsAt = (resource: string, level: Level): Permission[] =>
  (level === 'none' ? [] : level === 'read' ? ['read'] : ['read', 'write']).map(
    (l) => `${resource}:${l}` as Permission,
  );

/** The refusal of a key, with the items it names (a bad address, a permission a read-only key cannot hold). */
function explain(e: unknown): string {
  if (!(e instanceof ApiError)) return describeError(e);
  if (e.problem.code === 'api_key_limit_reached') return `${e.problem.detail} Revoke one of this user's keys first.`;
  const fields = e.problem.body?.errors ?? [];
  return [describeError(e), ...fields.map((f) => `${f.field} ${f.message}.`)].join(' ');
}

/** A key's effective permissions in a few words: "all", or each resource at its highest level; and where from. */
export function KeyPermissions({ permissions, allowedIps }: { permissions: string[]; allowedIps: string[] }) {
  const held = new Set(permissions);
  const summary = ALL_PERMISSIONS.every((p) => held.has(p))
    ? 'all'
    : RESOURCES.flatMap((r) => {
        const level = held.has(`${r.name}:write`) ? 'write' : held.has(`${r.name}:read`) ? 'read' : null;
        return level ? [`${r.label.toLowerCase()}: ${level}`] : [];
      }).join(', ') || 'none';
  return (
    <>
      {summary}
      {allowedIps.length > 0 && <span className="hint"> · from {allowedIps.join(', ')}</span>}
    </>
  );
}

export function CreateKey(props: {
  customerId: string;
  merchants: Schemas['Merchant'][];
  onCreated: (key: string) => void;
}) {
  const [kind, setKind] = useState<'customer' | 'merchant'>('customer');
  const [restricted, setRestricted] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: React.FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const body: Schemas['CreateApiKeyRequest'] = { user: String(form.get('user')), customer_id: props.customerId };
    if (kind === 'merchant') body.merchant_id = String(form.get('merchant'));
    const name = String(form.get('name') ?? '').trim();
    if (name) body.name = name;
    const expires = String(form.get('expires') ?? '');
    if (expires) body.expires_at = new Date(expires).toISOString();
    if (form.get('read_only')) body.access = 'read_only';
    if (restricted)
      body.permissions = RESOURCES.flatMap((r) => permissionsAt(r.name, String(form.get(`perm-${r.name}`)) as Level));
    const addresses = String(form.get('allowed_ips') ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    if (addresses.length > 0) body.allowed_ips = addresses;
    const limit = Number(form.get('limit'));
    if (limit > 0) body.rate_limit = { limit, window_seconds: Number(form.get('window')) || 60 };
    setBusy(true);
    setError(undefined);
    try {
      const created = await unwrap(client.POST('/v1/api-keys', { body }));
      formElement.reset();
      setKind('customer');
      setRestricted(false);
      props.onCreated(created.api_key);
    } catch (e) {
      setError(explain(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <details className="panel">
      <summary>Create a key</summary>
      <form onSubmit={submit} className="grid-form">
        <fieldset>
          <legend>Key for</legend>
          <label className="inline">
            <input
              type="radio"
              name="kind"
              value="customer"
              checked={kind === 'customer'}
              onChange={() => setKind('customer')}
            />{' '}
            the customer
          </label>
          <label className="inline">
            <input
              type="radio"
              name="kind"
              value="merchant"
              checked={kind === 'merchant'}
              onChange={() => setKind('merchant')}
            />{' '}
            a merchant
          </label>
        </fieldset>
        {kind === 'merchant' && (
          <label>
            <span>Merchant</span>
            <select name="merchant" required>
              {props.merchants.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          <span>Integration user (e-mail)</span>
          <input name="user" type="email" required placeholder="pos@example.com" />
        </label>
        <label>
          <span>Name</span>
          <input name="name" maxLength={64} placeholder="e.g. checkout server" />
        </label>
        <label>
          <span>Expires</span>
          <input name="expires" type="datetime-local" />
        </label>
        <label className="inline">
          <input name="read_only" type="checkbox" /> Read only (GET requests only)
        </label>
        <label>
          <span>Rate limit (requests)</span>
          <input name="limit" type="number" min={1} max={100000} placeholder="none" />
        </label>
        <label>
          <span>per (seconds)</span>
          <input name="window" type="number" min={1} max={86400} defaultValue={60} />
        </label>
        <label className="inline">
          <input type="checkbox" checked={restricted} onChange={(e) => setRestricted(e.target.checked)} /> Restrict what
          this key may do
        </label>
        {restricted && (
          <fieldset className="choices">
            <legend>Permissions by resource</legend>
            {RESOURCES.map((r) => (
              <label key={r.name}>
                <span>{r.label}</span>
                <select name={`perm-${r.name}`} defaultValue="read">
                  {r.levels.map((level) => (
                    <option key={level} value={level}>
                      {level}
                    </option>
                  ))}
                </select>
              </label>
            ))}
          </fieldset>
        )}
        <label className="wide">
          <span>Allowed addresses (IPv4 or IPv6 addresses or CIDR ranges, up to 20; empty: anywhere)</span>
          <textarea name="allowed_ips" rows={2} placeholder="203.0.113.0/24, 2001:db8::/32" />
        </label>
        <FormSubmit error={error} busy={busy} label="Create key" busyLabel="Creating…" />
      </form>
    </details>
  );
}
