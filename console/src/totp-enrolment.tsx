/** Turning on two-factor codes: the QR code of the otpauth:// URL, drawn in the browser, and the first code. */
import QRCode from 'qrcode';
import { useEffect, useRef, useState, type FormEvent } from 'react';

export function TotpEnrolment(props: {
  secret: string;
  otpauthUrl: string;
  busy: boolean;
  error?: string;
  onCode: (code: string) => void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [drawn, setDrawn] = useState(true);
  useEffect(() => {
    if (canvas.current) QRCode.toCanvas(canvas.current, props.otpauthUrl, { width: 200 }).catch(() => setDrawn(false));
  }, [props.otpauthUrl]);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    props.onCode(String(new FormData(event.currentTarget).get('code')).trim());
  };
  return (
    <form onSubmit={submit} className="stack">
      <p>Scan this code with an authenticator app, then type the 6-digit code it shows.</p>
      {drawn && <canvas ref={canvas} role="img" aria-label="QR code of the two-factor secret" />}
      <p className="hint">
        Or type the secret: <code data-testid="totp-secret">{props.secret}</code>
      </p>
      <label htmlFor="totp-code">Code from the app</label>
      <input id="totp-code" name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required />
      {props.error && (
        <p className="error" role="alert">
          {props.error}
        </p>
      )}
      <button type="submit" className="primary" disabled={props.busy}>
        Turn on two-factor codes
      </button>
    </form>
  );
}
