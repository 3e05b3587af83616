/** Change requests as the Approvals pages show them: what kind of change, what it touches, its status. */
import type { Schemas } from '../../clients/typescript/index';
import { isDryRun } from './preview';
import { formatDate } from './ui';
import { planLabel } from './plans';

export type ChangeRequest = Schemas['ChangeRequest'];

const KINDS: Record<string, string> = {
  'fee_rules.bulk_assign': 'Assign plans to merchants',
  'fee_rules.bulk_assign_all': 'Assign plans to every merchant',
  'fee_rules.merchant_assign': 'Assign plans to one merchant',
  'fee_rules.schedule_cancel': 'Cancel a scheduled change',
  'payment_plan.create': 'Create a plan',
  'payment_plan.retire': 'Retire a plan',
};

/** The change in words, with the instant of a scheduled one. */
export function kindOf(request: ChangeRequest): string {
  const kind = KINDS[request.operation] ?? request.operation;
  const body = request.request.body as { effective_at?: string } | null;
  return body?.effective_at ? `${kind}, scheduled for ${formatDate(body.effective_at)}` : kind;
}

type PlanFields = Parameters<typeof planLabel>[0];

/** What a request touches, in one line: its counts, or the plan or scheduled change it names. */
export function summaryOf(preview: unknown): string {
  if (isDryRun(preview))
    return `Merchants changed: ${preview.merchants_changed} of ${preview.merchants}; plans +${preview.assignments_added} / −${preview.assignments_removed}`;
  const named = preview as { payment_plan?: PlanFields; scheduled_change?: { effective_at: string } } | null;
  if (named?.payment_plan) return planLabel(named.payment_plan);
  if (named?.scheduled_change) return `The change for ${formatDate(named.scheduled_change.effective_at)}`;
  return '—';
}

export function RequestStatus({ status }: { status: ChangeRequest['status'] }) {
  return (
    <span className={`tag status-${status.toLowerCase()}`}>{status.charAt(0) + status.slice(1).toLowerCase()}</span>
  );
}

/** Who asked or decided: a user's e-mail, or the API key and the e-mail of the user it belongs to. */
export function personOf(person: ChangeRequest['requested_by'] | null): string {
  if (!person) return '—';
  if (person.type === 'user') return person.email ?? '—';
  const key = `API key ${person.id.slice(0, 8)}`;
  return person.email ? `${person.email} (${key})` : key;
}
