import { useState, type FormEvent } from 'react';
import { client, describeError, unwrap } from '../api';
import type { TokenSet } from '../session';

export function SignIn({ notice, onToken }: { notice?: string; onToken: (token: TokenSet) => Promise<void> }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const { token } = await unwrap(
        client.POST('/v1/login', { body: { user: String(form.get('user')), password: String(form.get('password')) } }),
      );
      await onToken(token);
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <div className="card">
        <p className="brand">feegate</p>
        <h1>Sign in to the back office</h1>
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        <form onSubmit={submit} className="stack">
          <label htmlFor="signin-user">E-mail</label>
          <input id="signin-user" name="user" type="email" autoComplete="username" required />
          <label htmlFor="signin-password">Password</label>
          <input id="signin-password" name="password" type="password" autoComplete="current-password" required />
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </div>
    </main>
  );
}
