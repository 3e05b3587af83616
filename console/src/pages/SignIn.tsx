import { useRef, useState, type FormEvent, type ReactNode } from 'react';
import type { Schemas } from '../../../clients/typescript/index';
import { ApiError, client, describeError, unwrap } from '../api';
import { RevealedSecret } from '../secret';
import type { TokenSet } from '../session';
import { TotpEnrolment } from '../totp-enrolment';

type Challenge = NonNullable<Schemas['LoginResponse']['challenge']>;
type Step =
  | { kind: 'password' }
  | { kind: 'challenge'; challenge: Challenge; enrolment?: { secret: string; otpauth_url: string } }
  | { kind: 'recovery'; token: TokenSet; codes: string[] };

/** Sign in, then whatever challenge the login answers: a new password, a two-factor code, or enrolment. */
export function SignIn({ notice, onToken }: { notice?: string; onToken: (token: TokenSet) => Promise<void> }) {
  const [step, setStep] = useState<Step>({ kind: 'password' });
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  /** The password just proven (or chosen): enrolling two-factor codes asks for it again (a step-up). */
  const password = useRef('');

  /** Runs one call of the sign-in; its answer is the token or the next challenge. */
  const attempt = async (call: () => Promise<Schemas['LoginResponse']>) => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await call();
      if (answer.token && answer.recovery_codes)
        setStep({ kind: 'recovery', token: answer.token, codes: answer.recovery_codes });
      else if (answer.token) await onToken(answer.token);
      else if (answer.challenge) setStep({ kind: 'challenge', challenge: answer.challenge });
    } catch (e) {
      setError(describeError(e));
      // A spent challenge cannot be answered again: back to the password.
      if (e instanceof ApiError && e.problem.code === 'invalid_challenge') setStep({ kind: 'password' });
    }
    setBusy(false);
  };
  const answer = (challenge: Challenge, body: { new_password?: string; code?: string }) =>
    attempt(() =>
      unwrap(
        client.POST('/v1/login/challenge', { body: { name: challenge.name, session: challenge.session, ...body } }),
      ),
    );
  const field = (event: FormEvent<HTMLFormElement>, name: string) => {
    event.preventDefault();
    return String(new FormData(event.currentTarget).get(name) ?? '');
  };

  let content: ReactNode;
  if (step.kind === 'password') {
    content = (
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          const body = { user: String(form.get('user')), password: String(form.get('password')) };
          password.current = body.password;
          void attempt(() => unwrap(client.POST('/v1/login', { body })));
        }}
        className="stack"
      >
        <label htmlFor="signin-user">E-mail</label>
        <input id="signin-user" name="user" type="email" autoComplete="username" required />
        <label htmlFor="signin-password">Password</label>
        <input id="signin-password" name="password" type="password" autoComplete="current-password" required />
        <Problem error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    );
  } else if (step.kind === 'recovery') {
    content = (
      <RevealedSecret
        label="Recovery codes"
        value={step.codes.join('\n')}
        note="Two-factor codes are on. Store these recovery codes now: each signs you in once without the app, and they are shown only once."
        onDone={() => void onToken(step.token)}
      />
    );
  } else if (step.challenge.name === 'NEW_PASSWORD_REQUIRED') {
    const { challenge } = step;
    content = (
      <form
        onSubmit={(event) => {
          password.current = field(event, 'new_password');
          void answer(challenge, { new_password: password.current });
        }}
        className="stack"
      >
        <p>Choose your own password to replace the temporary one: 12 to 256 characters, not a common one.</p>
        <label htmlFor="new-password">New password</label>
        <input
          id="new-password"
          name="new_password"
          type="password"
          autoComplete="new-password"
          minLength={12}
          required
        />
        <Problem error={error} />
        <button type="submit" className="primary" disabled={busy}>
          Set password and sign in
        </button>
      </form>
    );
  } else if (step.challenge.name === 'SOFTWARE_TOKEN_MFA') {
    const { challenge } = step;
    content = (
      <form onSubmit={(event) => void answer(challenge, { code: field(event, 'code').trim() })} className="stack">
        <label htmlFor="mfa-code">Code from your authenticator app (or a recovery code)</label>
        <input id="mfa-code" name="code" autoComplete="one-time-code" required />
        <Problem error={error} />
        <button type="submit" className="primary" disabled={busy}>
          Verify
        </button>
      </form>
    );
  } else {
    const { challenge, enrolment } = step;
    content = enrolment ? (
      <TotpEnrolment
        secret={enrolment.secret}
        otpauthUrl={enrolment.otpauth_url}
        busy={busy}
        error={error}
        onCode={(code) => void answer(challenge, { code })}
      />
    ) : (
      <div className="stack">
        <p>Your organisation requires two-factor codes. Set up an authenticator app to continue.</p>
        <Problem error={error} />
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={async () => {
            try {
              const started = await unwrap(
                client.POST('/v1/users/me/mfa/totp', {
                  headers: { authorization: `Bearer ${challenge.session}` },
                  body: { current_password: password.current },
                }),
              );
              setStep({ kind: 'challenge', challenge, enrolment: started });
            } catch (e) {
              setError(describeError(e));
            }
          }}
        >
          Set up two-factor codes
        </button>
      </div>
    );
  }
  return (
    <main className="signin">
      <div className="card">
        <p className="brand">feegate</p>
        <h1>Sign in to the back office</h1>
        {notice && step.kind === 'password' && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        {content}
      </div>
    </main>
  );
}

function Problem({ error }: { error?: string }) {
  return error ? (
    <p className="error" role="alert">
      {error}
    </p>
  ) : null;
}
