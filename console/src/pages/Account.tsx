import { useState, type FormEvent } from 'react';
import { client, describeError, unwrap } from '../api';
import { RevealedSecret } from '../secret';
import { TotpEnrolment } from '../totp-enrolment';
import { useLoad } from '../ui';

/** The signed-in user's own password and two-factor codes. */
export function AccountPage({ email }: { email: string }) {
  const [users, reload] = useLoad(() => unwrap(client.GET('/v1/users', { params: { query: { email } } })), [email]);
  const mfaOn = users.state === 'ready' && users.value.users[0]?.mfa_enabled === true;
  const [message, setMessage] = useState<{ ok: boolean; text: string }>();
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_url: string }>();
  const [codes, setCodes] = useState<string[]>();
  const [busy, setBusy] = useState(false);

  const run = async (work: () => Promise<string>) => {
    setBusy(true);
    setMessage(undefined);
    try {
      setMessage({ ok: true, text: await work() });
    } catch (e) {
      setMessage({ ok: false, text: describeError(e) });
    }
    setBusy(false);
  };
  const changePassword = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    void run(async () => {
      await unwrap(
        client.POST('/v1/users/me/password', {
          body: { current_password: String(form.get('current')), new_password: String(form.get('new')) },
        }),
      );
      formElement.reset();
      return 'Your password is changed. Your other sessions have ended.';
    });
  };

  return (
    <section aria-labelledby="account-title">
      <div className="page-head">
        <h1 id="account-title">My account</h1>
      </div>
      <p className="lead">{email}</p>
      {message && (
        <p className={message.ok ? 'success' : 'error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      <h2>Password</h2>
      <form onSubmit={changePassword} className="stack">
        <label htmlFor="current-password">Current password</label>
        <input id="current-password" name="current" type="password" autoComplete="current-password" required />
        <label htmlFor="account-new-password">New password (12 to 256 characters)</label>
        <input
          id="account-new-password"
          name="new"
          type="password"
          autoComplete="new-password"
          minLength={12}
          required
        />
        <button type="submit" className="primary" disabled={busy}>
          Change password
        </button>
      </form>
      <h2>Two-factor codes</h2>
      {codes && (
        <RevealedSecret
          label="Recovery codes"
          value={codes.join('\n')}
          note="Store these recovery codes now: each signs you in once without the app, and they are shown only once."
          onDone={() => setCodes(undefined)}
        />
      )}
      {mfaOn ? (
        <form
          className="stack"
          onSubmit={(event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            const code = String(form.get('code')).trim();
            const current_password = String(form.get('password'));
            void run(async () => {
              await unwrap(client.DELETE('/v1/users/me/mfa/totp', { body: { code, current_password } }));
              reload();
              return 'Two-factor codes are off. Your other sessions have ended.';
            });
          }}
        >
          <p>Two-factor codes are on.</p>
          <label htmlFor="off-password">Your password, to turn them off</label>
          <input id="off-password" name="password" type="password" autoComplete="current-password" required />
          <label htmlFor="off-code">A current code (or a recovery code) to turn them off</label>
          <input id="off-code" name="code" autoComplete="one-time-code" required />
          <button type="submit" className="danger" disabled={busy}>
            Turn off two-factor codes
          </button>
        </form>
      ) : enrolment ? (
        <TotpEnrolment
          secret={enrolment.secret}
          otpauthUrl={enrolment.otpauth_url}
          busy={busy}
          onCode={(code) =>
            void run(async () => {
              const answer = await unwrap(client.POST('/v1/users/me/mfa/totp/verify', { body: { code } }));
              setCodes(answer.recovery_codes);
              setEnrolment(undefined);
              reload();
              return 'Two-factor codes are on. Your other sessions have ended.';
            })
          }
        />
      ) : (
        <form
          className="stack"
          onSubmit={(event) => {
            event.preventDefault();
            const current_password = String(new FormData(event.currentTarget).get('password'));
            void run(async () => {
              setEnrolment(await unwrap(client.POST('/v1/users/me/mfa/totp', { body: { current_password } })));
              return 'Scan the QR code to continue.';
            });
          }}
        >
          <label htmlFor="enrol-password">Your password, to set up two-factor codes</label>
          <input id="enrol-password" name="password" type="password" autoComplete="current-password" required />
          <button type="submit" className="primary" disabled={busy}>
            Set up two-factor codes
          </button>
        </form>
      )}
    </section>
  );
}
