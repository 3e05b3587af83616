/** Small shared pieces: the load/empty/error states, a pager, a data loader. */
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import type { Schemas } from '../../clients/typescript/index';
import { describeError } from './api';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'ready'; value: T };

/** Runs `load` whenever its dependencies change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names load's dependencies, as with useEffect.
  const run = useCallback(load, deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: tick is how reload asks for another run.
  useEffect(() => {
    let live = true;
    setResult({ state: 'loading' });
    run().then(
      (value) => live && setResult({ state: 'ready', value }),
      (error: unknown) => live && setResult({ state: 'error', message: describeError(error) }),
    );
    return () => {
      live = false;
    };
  }, [run, tick]);
  return [result, () => setTick((t) => t + 1)];
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="state" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function ErrorNote({ message }: { message: string }) {
  return (
    <p className="state error" role="alert">
      {message}
    </p>
  );
}

/** The end of a form: what the service refused, then its submit button, which waits while the request runs. */
export function FormSubmit({
  error,
  busy,
  label,
  busyLabel,
}: {
  error: string | undefined;
  busy: boolean;
  label: string;
  busyLabel: string;
}) {
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? busyLabel : label}
        </button>
      </div>
    </>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state empty">{children}</p>;
}

/** `label` names the items, `[one, many]`: "1 webhook", "3 webhooks". */
export function Pager({
  page,
  onPage,
  label: [one, many],
}: {
  page: Schemas['Page'];
  onPage: (n: number) => void;
  label: readonly [string, string];
}) {
  const label = page.total_elements === 1 ? one : many;
  if (page.total_pages <= 1)
    return (
      <p className="count">
        {page.total_elements} {label}
      </p>
    );
  return (
    <nav className="pager" aria-label={`Pages of ${many}`}>
      <button type="button" disabled={page.number === 0} onClick={() => onPage(page.number - 1)}>
        Previous
      </button>
      <span>
        Page {page.number + 1} of {page.total_pages} · {page.total_elements} {label}
      </span>
      <button type="button" disabled={page.number + 1 >= page.total_pages} onClick={() => onPage(page.number + 1)}>
        Next
      </button>
    </nav>
  );
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
