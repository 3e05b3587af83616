import { useState } from 'react';
import type { Schemas } from '../../../clients/typescript/index';
import { client, describeError, unwrap } from '../api';
import { Dialog } from '../dialog';
import { RevealedSecret } from '../secret';
import { currentRole } from '../session';
import { Empty, ErrorNote, formatDate, Loading, useLoad } from '../ui';

type User = Schemas['User'];
const ROLES = ['ADMIN', 'MEMBER', 'VIEWER'] as const;

/** The customer's users; an ADMIN adds them, changes roles, disables and resets; others only read. */
export function UsersPage() {
  const admin = currentRole() === 'ADMIN';
  const [listing, reload] = useLoad(() => unwrap(client.GET('/v1/users', { params: { query: { size: 100 } } })), []);
  const [revealed, setRevealed] = useState<{ email: string; password: string }>();
  // A user with two-factor codes gets a reset's temporary password by mail only (delivered_by: email).
  const [mailedTo, setMailedTo] = useState<string>();
  const [adding, setAdding] = useState(false);
  const [resetting, setResetting] = useState<User>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const change = async (user: User, body: Schemas['UpdateUserRequest']) => {
    setError(undefined);
    try {
      await unwrap(client.PATCH('/v1/users/{id}', { params: { path: { id: user.attributes.id } }, body }));
      reload();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <section aria-labelledby="users-title">
      <div className="page-head">
        <h1 id="users-title">Users</h1>
        {admin && (
          <button type="button" className="primary" onClick={() => setAdding(true)}>
            Add user
          </button>
        )}
      </div>
      {revealed && (
        <RevealedSecret
          label="Temporary password"
          value={revealed.password}
          note={`Temporary password of ${revealed.email}: give it to them now, it is shown only once. They choose their own at the first sign-in.`}
          onDone={() => setRevealed(undefined)}
        />
      )}
      {mailedTo && (
        <p role="status">
          The temporary password of {mailedTo} was mailed to them only, since they had two-factor codes (now off).
        </p>
      )}
      {error && <ErrorNote message={error} />}
      {listing.state === 'loading' && <Loading what="users" />}
      {listing.state === 'error' && <ErrorNote message={listing.message} />}
      {listing.state === 'ready' &&
        (listing.value.users.length === 0 ? (
          <Empty>No users yet.</Empty>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Added</th>
                {admin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {listing.value.users.map((user) => (
                <tr key={user.attributes.id}>
                  <td data-label="E-mail">{user.attributes.email}</td>
                  <td data-label="Name">{user.attributes.name ?? '—'}</td>
                  <td data-label="Kind">{user.attributes.scope === 'LOGIN' ? 'Login' : 'API keys'}</td>
                  <td data-label="Role">
                    {admin && user.attributes.role ? (
                      <select
                        aria-label={`Role of ${user.attributes.email}`}
                        value={user.attributes.role}
                        onChange={(e) => void change(user, { role: e.currentTarget.value as (typeof ROLES)[number] })}
                      >
                        {ROLES.map((role) => (
                          <option key={role}>{role}</option>
                        ))}
                      </select>
                    ) : (
                      (user.attributes.role ?? '—')
                    )}
                  </td>
                  <td data-label="Status">
                    <span className="tag">{user.status}</span>
                    {user.mfa_enabled && <span className="tag">2FA</span>}
                  </td>
                  <td data-label="Added">{formatDate(user.audit.creation_date)}</td>
                  {admin && (
                    <td data-label="Actions" className="row-actions">
                      <button type="button" onClick={() => void change(user, { enabled: !user.enabled })}>
                        {user.enabled ? 'Disable' : 'Enable'}
                        <span className="sr-only"> {user.attributes.email}</span>
                      </button>
                      {user.attributes.scope === 'LOGIN' && (
                        <button type="button" onClick={() => setResetting(user)}>
                          Reset password<span className="sr-only"> of {user.attributes.email}</span>
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      {adding && (
        <Dialog
          title="Add a user"
          confirm="Add user"
          busy={busy}
          onClose={() => setAdding(false)}
          onConfirm={async (form) => {
            setBusy(true);
            setError(undefined);
            try {
              const name = String(form.get('name') ?? '').trim();
              const created = await unwrap(
                client.POST('/v1/users', {
                  body: {
                    email: String(form.get('email')).trim(),
                    role: String(form.get('role')) as (typeof ROLES)[number],
                    ...(name && { name }),
                  },
                }),
              );
              setRevealed({ email: created.attributes.email, password: created.temporary_password });
              setAdding(false);
              reload();
            } catch (e) {
              setError(describeError(e));
              setAdding(false);
            }
            setBusy(false);
          }}
        >
          <label htmlFor="new-user-email">E-mail</label>
          <input id="new-user-email" name="email" type="email" required />
          <label htmlFor="new-user-name">Name (optional)</label>
          <input id="new-user-name" name="name" maxLength={200} />
          <label htmlFor="new-user-role">Role</label>
          <select id="new-user-role" name="role" defaultValue="MEMBER">
            {ROLES.map((role) => (
              <option key={role}>{role}</option>
            ))}
          </select>
        </Dialog>
      )}
      {resetting && (
        <Dialog
          title={`Reset the password of ${resetting.attributes.email}?`}
          confirm="Reset password"
          danger
          busy={busy}
          onClose={() => setResetting(undefined)}
          onConfirm={async () => {
            setBusy(true);
            try {
              const { temporary_password } = await unwrap(
                client.POST('/v1/users/{id}/reset-password', { params: { path: { id: resetting.attributes.id } } }),
              );
              if (temporary_password === null) setMailedTo(resetting.attributes.email);
              else setRevealed({ email: resetting.attributes.email, password: temporary_password });
              reload();
            } catch (e) {
              setError(describeError(e));
            }
            setResetting(undefined);
            setBusy(false);
          }}
        >
          <p>Their sessions end at once and two-factor codes are turned off; they sign in with a temporary password.</p>
        </Dialog>
      )}
    </section>
  );
}
