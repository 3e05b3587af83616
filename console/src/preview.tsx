/** What an assignment would change (its dry run): the counts, then the first changed merchants with their plans. */
import { Link } from 'wouter';
import type { Schemas } from '../../clients/typescript/index';
import { Empty } from './ui';

export type DryRun = Schemas['BulkAssignDryRun'];

/**
 * Whether `value` (a change request's preview or result, typed unknown) is what
 * an assignment changes, as its dry run answers it (an applied result lacks `dry_run` only).
 */
export function isDryRun(value: unknown): value is DryRun {
  return typeof value === 'object' && value !== null && 'assignments_added' in value && 'changes' in value;
}

/** `label` names a plan id; `title` is the section's accessible name. */
export function Preview({
  result,
  label,
  title = 'Preview of the change',
}: {
  result: DryRun;
  label: (planId: string) => string;
  title?: string;
}) {
  return (
    <section className="preview" aria-label={title}>
      <dl className="stats">
        <div>
          <dt>Merchants</dt>
          <dd data-testid="preview-merchants">{result.merchants}</dd>
        </div>
        <div>
          <dt>Would change</dt>
          <dd data-testid="preview-changed">{result.merchants_changed}</dd>
        </div>
        <div>
          <dt>Plans added</dt>
          <dd data-testid="preview-added">{result.assignments_added}</dd>
        </div>
        <div>
          <dt>Plans removed</dt>
          <dd data-testid="preview-removed">{result.assignments_removed}</dd>
        </div>
      </dl>
      {result.changes.length === 0 ? (
        <Empty>Nothing would change: every merchant already has these plans.</Empty>
      ) : (
        <table>
          <caption>
            {result.merchants_changed > result.changes.length
              ? `First ${result.changes.length} of ${result.merchants_changed} changed merchants`
              : `${result.changes.length} changed merchant${result.changes.length === 1 ? '' : 's'}`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Merchant</th>
              <th scope="col">Added</th>
              <th scope="col">Removed</th>
            </tr>
          </thead>
          <tbody>
            {result.changes.map((c) => (
              <tr key={c.merchant_id}>
                <td data-label="Merchant">
                  <Link href={`/merchants/${c.merchant_id}`}>
                    <code>{c.merchant_id.slice(0, 8)}</code>
                  </Link>
                </td>
                <td data-label="Added">{c.added.map(label).join(', ') || '—'}</td>
                <td data-label="Removed">{c.removed.map(label).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
