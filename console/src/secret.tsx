/** A secret shown once (a key, a temporary password, recovery codes), with a copy button. */
import { useState } from 'react';

export function RevealedSecret(props: {
  label: string;
  value: string;
  note: string;
  onDone: () => void;
  testId?: string;
  copyLabel?: string;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <section className="secret" aria-label={props.label}>
      <p>{props.note}</p>
      <code data-testid={props.testId ?? 'revealed-secret'}>
        {props.value.split('\n').map((line, i) => (
          <span key={line}>
            {i > 0 && <br />}
            {line}
          </span>
        ))}
      </code>
      <div className="actions">
        <button
          type="button"
          className="primary"
          onClick={() =>
            void navigator.clipboard?.writeText(props.value).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : (props.copyLabel ?? 'Copy')}
        </button>
        <button type="button" onClick={props.onDone}>
          I have stored it
        </button>
      </div>
    </section>
  );
}
