/**
 * What a form tells after its request: done, refused, or, under the customer's
 * four-eyes policy (contract section 23), sent for approval with a link to the
 * change request on the Approvals page.
 */
import { Link } from 'wouter';
import { ErrorNote } from './ui';

export interface Outcome {
  ok: boolean;
  text: string;
  /** The change request that holds the change, when it went for approval. */
  changeRequest?: string;
}

/** A change held as change request `id`, waiting for another ADMIN. */
export const sentForApproval = (id: string): Outcome => ({
  ok: true,
  text: 'Sent for approval: another ADMIN approves or rejects this change.',
  changeRequest: id,
});

/** The outcome of an answer that held the change for approval (202 `{ change_request }`), else undefined. */
export function heldOutcome(answer: unknown): Outcome | undefined {
  if (typeof answer !== 'object' || answer === null || !('change_request' in answer)) return undefined;
  return sentForApproval((answer as { change_request: { id: string } }).change_request.id);
}

export function OutcomeNote({ outcome }: { outcome: Outcome | undefined }) {
  if (!outcome) return null;
  if (!outcome.ok) return <ErrorNote message={outcome.text} />;
  return (
    <p className="success" role="status">
      {outcome.text}
      {outcome.changeRequest && (
        <>
          {' '}
          <Link href={`/approvals/${outcome.changeRequest}`}>Open the change request</Link>
        </>
      )}
    </p>
  );
}
