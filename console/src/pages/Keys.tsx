/** API keys: the ENABLED / EXPIRED / DELETED listings with each key's effective permissions, creation (shown once), rename, roll, revoke. */
import { useState } from 'react';
import type { Schemas } from '../../../clients/typescript/index';
import { client, describeError, MAX_PAGE_SIZE, unwrap } from '../api';
import { CreateKey, KeyPermissions } from '../key-form';
import { RevealedSecret } from '../secret';
import { currentRole } from '../session';
import { Dialog } from '../dialog';
import { listMerchants } from '../merchants';
import { Empty, ErrorNote, formatDate, Loading, Pager, useLoad } from '../ui';

type Action = { kind: 'revoke' | 'rename' | 'roll'; key: Schemas['ApiKey'] };
type Status = Schemas['ApiKey']['status'];

const STATUSES: Status[] = ['ENABLED', 'EXPIRED', 'DELETED'];

export function KeysPage({ customerId }: { customerId: string }) {
  // A VIEWER only reads: no button it may not use.
  const canWrite = currentRole() !== 'VIEWER';
  const [status, setStatus] = useState<Status>('ENABLED');
  const [merchantId, setMerchantId] = useState('');
  const [username, setUsername] = useState('');
  const [page, setPage] = useState(0);
  const [revealed, setRevealed] = useState<{ secret: string; note: string }>();
  const [action, setAction] = useState<Action>();
  const [actionError, setActionError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [merchants] = useLoad(() => listMerchants(0, MAX_PAGE_SIZE), []);
  const merchantList = merchants.state === 'ready' ? merchants.value._embedded.merchants : [];

  const [keys, reload] = useLoad(
    () =>
      unwrap(
        client.GET('/v1/api-keys', {
          params: {
            query: {
              status,
              page,
              size: 20,
              ...(merchantId && { merchant_id: merchantId }),
              ...(username && { username }),
            },
          },
        }),
      ),
    [status, page, merchantId, username],
  );

  const runAction = async (form: FormData) => {
    if (!action) return;
    setBusy(true);
    setActionError(undefined);
    try {
      const path = { id: action.key.id };
      if (action.kind === 'revoke') {
        await unwrap(client.DELETE('/v1/api-keys/{id}', { params: { path } }));
      } else if (action.kind === 'rename') {
        await unwrap(client.PATCH('/v1/api-keys/{id}', { params: { path }, body: { name: String(form.get('name')) } }));
      } else {
        const rolled = await unwrap(
          client.POST('/v1/api-keys/{id}/roll', {
            params: { path },
            body: { grace_period_seconds: Number(form.get('grace')) },
          }),
        );
        setRevealed({
          secret: rolled.api_key,
          note: 'The key was rolled. Copy the new key now: it is shown only once.',
        });
      }
      setAction(undefined);
      reload();
    } catch (error) {
      setActionError(describeError(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="keys-title">
      <div className="page-head">
        <h1 id="keys-title">API keys</h1>
      </div>
      {canWrite && (
        <CreateKey
          customerId={customerId}
          merchants={merchantList}
          onCreated={(key) => {
            setRevealed({ secret: key, note: 'Copy this key now: it is shown only once.' });
            reload();
          }}
        />
      )}
      {revealed && (
        <RevealedSecret
          label="New API key"
          value={revealed.secret}
          note={revealed.note}
          testId="new-key"
          copyLabel="Copy key"
          onDone={() => setRevealed(undefined)}
        />
      )}

      <div className="filters">
        <div role="tablist" aria-label="Key status" className="tabs">
          {STATUSES.map((s) => (
            <button
              key={s}
              type="button"
              role="tab"
              aria-selected={status === s}
              onClick={() => {
                setStatus(s);
                setPage(0);
              }}
            >
              {s[0] + s.slice(1).toLowerCase()}
            </button>
          ))}
        </div>
        <label>
          <span>Keys of</span>
          <select
            value={merchantId}
            onChange={(e) => {
              setMerchantId(e.target.value);
              setPage(0);
            }}
          >
            <option value="">the customer</option>
            {merchantList.map((m) => (
              <option key={m.id} value={m.id}>
                merchant {m.name}
              </option>
            ))}
          </select>
        </label>
        <search>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              setUsername(String(new FormData(e.currentTarget).get('username') ?? '').trim());
              setPage(0);
            }}
          >
            <label>
              <span>User</span>
              <input name="username" type="search" placeholder="e-mail of the key user" />
            </label>
            <button type="submit">Search</button>
          </form>
        </search>
      </div>

      <div role="tabpanel" aria-label={`${status} keys`}>
        {keys.state === 'loading' && <Loading what="keys" />}
        {keys.state === 'error' && <ErrorNote message={keys.message} />}
        {keys.state === 'ready' &&
          (keys.value.data.length === 0 ? (
            <Empty>
              No {status.toLowerCase()} keys{username ? ` for ${username}` : ''}.
            </Empty>
          ) : (
            <>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Name</th>
                    <th scope="col">User</th>
                    <th scope="col">Access</th>
                    <th scope="col">Permissions</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Expires</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {keys.value.data.map((key) => (
                    <tr key={key.id}>
                      <td data-label="Key">
                        <code>{key.api_key}</code>
                      </td>
                      <td data-label="Name">{key.name ?? '—'}</td>
                      <td data-label="User">
                        {key.user} <span className="tag">{key.user_type.toLowerCase()}</span>
                      </td>
                      <td data-label="Access">{key.access === 'read_only' ? 'read only' : 'full'}</td>
                      <td data-label="Permissions">
                        <KeyPermissions permissions={key.permissions} allowedIps={key.allowed_ips} />
                      </td>
                      <td data-label="Created">{formatDate(key.create_date)}</td>
                      <td data-label="Last used">{formatDate(key.last_used_at)}</td>
                      <td data-label="Expires">{formatDate(key.expires_at)}</td>
                      <td className="row-actions">
                        {canWrite && key.status === 'ENABLED' && (
                          <>
                            <button
                              type="button"
                              aria-label={`Rename ${key.api_key}`}
                              onClick={() => setAction({ kind: 'rename', key })}
                            >
                              Rename
                            </button>
                            <button
                              type="button"
                              aria-label={`Roll ${key.api_key}`}
                              onClick={() => setAction({ kind: 'roll', key })}
                            >
                              Roll
                            </button>
                            <button
                              type="button"
                              className="danger"
                              aria-label={`Revoke ${key.api_key}`}
                              onClick={() => setAction({ kind: 'revoke', key })}
                            >
                              Revoke
                            </button>
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager page={keys.value.page} onPage={setPage} label={['key', 'keys']} />
            </>
          ))}
      </div>

      {action && (
        <Dialog
          title={{ revoke: 'Revoke this key?', rename: 'Rename key', roll: 'Roll key' }[action.kind]}
          confirm={{ revoke: 'Revoke key', rename: 'Save name', roll: 'Roll key' }[action.kind]}
          danger={action.kind === 'revoke'}
          busy={busy}
          onConfirm={(form) => void runAction(form)}
          onClose={() => {
            setAction(undefined);
            setActionError(undefined);
          }}
        >
          {action.kind === 'revoke' && (
            <p>
              <code>{action.key.api_key}</code> of {action.key.user} stops working at once, everywhere. This cannot be
              undone.
            </p>
          )}
          {action.kind === 'rename' && (
            <>
              <label htmlFor="rename-name">Name</label>
              <input id="rename-name" name="name" required maxLength={64} defaultValue={action.key.name ?? ''} />
            </>
          )}
          {action.kind === 'roll' && (
            <>
              <p>
                A new key replaces <code>{action.key.api_key}</code>. The old one keeps working for the grace period.
              </p>
              <label htmlFor="roll-grace">Grace period</label>
              <select id="roll-grace" name="grace" defaultValue="3600">
                <option value="0">none: the old key stops at once</option>
                <option value="3600">1 hour</option>
                <option value="86400">1 day</option>
                <option value="604800">7 days</option>
              </select>
            </>
          )}
          {actionError && (
            <p className="error" role="alert">
              {actionError}
            </p>
          )}
        </Dialog>
      )}
    </section>
  );
}
