/**
 * One change request: who asked for what, what it would change now (its dry
 * run, the table of merchants and plans), and its decision. Another ADMIN
 * approves it (with the preview_hash of what they saw: if the world moved, the
 * service refuses and the page shows the new preview) or rejects it with a
 * reason; the requester may cancel it.
 */
import { useEffect, useRef, useState } from 'react';
import { Link } from 'wouter';
import type { Schemas } from '../../../clients/typescript/index';
import { client, describeError, unwrap } from '../api';
import { kindOf, personOf, RequestStatus } from '../change-requests';
import { Dialog } from '../dialog';
import { type Outcome, OutcomeNote } from '../outcome';
import { loadCatalogue, planLabel } from '../plans';
import { isDryRun, Preview } from '../preview';
import { currentRole } from '../session';
import { ErrorNote, formatDate, Loading, useLoad } from '../ui';

type Detail = Schemas['ChangeRequestDetail'];

export function ChangeRequestPage({ id, userId }: { id: string; userId: string }) {
  const [loaded, reload] = useLoad(
    () => unwrap(client.GET('/v1/change-requests/{id}', { params: { path: { id } } })),
    [id],
  );
  const [catalogue] = useLoad(loadCatalogue, []);
  const [outcome, setOutcome] = useState<Outcome>();
  const title = useRef<HTMLHeadingElement>(null);
  const plans = catalogue.state === 'ready' ? catalogue.value : [];
  const label = (planId: string) => {
    const plan = plans.find((p) => p.id === planId);
    return plan ? planLabel(plan) : planId.slice(0, 8);
  };
  const request = loaded.state === 'ready' ? loaded.value : undefined;
  // After a decision the buttons are gone: focus goes to the heading, the outcome is announced.
  useEffect(() => {
    if (outcome) title.current?.focus();
  }, [outcome]);

  const decided = (result: Outcome) => {
    setOutcome(result);
    reload();
  };
  const refused = (error: unknown) => {
    setOutcome({ ok: false, text: describeError(error) });
    // A changed preview or a request decided meanwhile: show it as it is now.
    reload();
  };

  return (
    <section aria-labelledby="request-title">
      <div className="page-head">
        <p className="crumbs">
          <Link href="/approvals">Approvals</Link> /
        </p>
        <h1 id="request-title" ref={title} tabIndex={-1}>
          {request ? kindOf(request) : 'Change request'}
          {request && <RequestStatus status={request.status} />}
        </h1>
        <p className="lead">
          <code>{id}</code>
        </p>
      </div>
      <OutcomeNote outcome={outcome} />
      {loaded.state === 'loading' && <Loading what="the change request" />}
      {loaded.state === 'error' && <ErrorNote message={loaded.message} />}
      {request && (
        <>
          <Facts request={request} />
          <h2>{request.status === 'PENDING' ? 'What it would change now' : 'What it would have changed when asked'}</h2>
          <Effect value={request.status === 'PENDING' ? request.current_preview : request.preview} label={label} />
          {request.status === 'PENDING' && (
            <Decision
              request={request}
              isRequester={request.requested_by.type === 'user' && request.requested_by.id === userId}
              onDecided={decided}
              onRefused={refused}
            />
          )}
          {request.status === 'APPLIED' && (
            <>
              <h2>What it changed</h2>
              <Effect value={request.result} label={label} title="What the change did" />
            </>
          )}
        </>
      )}
    </section>
  );
}

function Facts({ request }: { request: Detail }) {
  return (
    <dl className="facts" data-testid="request-facts">
      <div>
        <dt>Requested by</dt>
        <dd>{personOf(request.requested_by)}</dd>
      </div>
      <div>
        <dt>Requested</dt>
        <dd>{formatDate(request.create_date)}</dd>
      </div>
      {request.status === 'PENDING' ? (
        <div>
          <dt>Expires</dt>
          <dd>{formatDate(request.expires_at)}</dd>
        </div>
      ) : (
        <div>
          <dt>Decided</dt>
          <dd>
            {formatDate(request.decided_at)}
            {request.reviewed_by && ` by ${personOf(request.reviewed_by)}`}
          </dd>
        </div>
      )}
      {request.reason && (
        <div>
          <dt>{request.status === 'REJECTED' ? 'Reason' : 'Why it failed'}</dt>
          <dd data-testid="request-reason">{request.reason}</dd>
        </div>
      )}
      <div>
        <dt>Request</dt>
        <dd>
          <code>
            {request.request.method} {request.request.path}
          </code>
        </dd>
      </div>
    </dl>
  );
}

/** A dry run as its table; a plan or a scheduled change by name; a change that can no longer apply, why. */
function Effect({ value, label, title }: { value: unknown; label: (id: string) => string; title?: string }) {
  if (isDryRun(value)) return <Preview result={value} label={label} title={title} />;
  const named = value as {
    problem?: { detail: string };
    payment_plan?: Parameters<typeof planLabel>[0];
    scheduled_change?: { effective_at: string };
  } | null;
  if (named?.problem) return <ErrorNote message={`It can no longer apply: ${named.problem.detail}`} />;
  if (named?.payment_plan) return <p data-testid="request-plan">{planLabel(named.payment_plan)}</p>;
  if (named?.scheduled_change)
    return <p>The scheduled change for {formatDate(named.scheduled_change.effective_at)} would be cancelled.</p>;
  return <p>—</p>;
}

function Decision({
  request,
  isRequester,
  onDecided,
  onRefused,
}: {
  request: Detail;
  isRequester: boolean;
  onDecided: (outcome: Outcome) => void;
  onRefused: (error: unknown) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [rejecting, setRejecting] = useState(false);
  const path = { params: { path: { id: request.id } } };
  const run = async (call: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await call();
    } catch (error) {
      onRefused(error);
    } finally {
      setBusy(false);
    }
  };

  if (isRequester)
    return (
      <div className="actions">
        <p className="hint">You asked for this change: another ADMIN approves or rejects it.</p>
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            void run(() =>
              unwrap(client.POST('/v1/change-requests/{id}/cancel', path)).then(() =>
                onDecided({ ok: true, text: 'Change request cancelled.' }),
              ),
            )
          }
        >
          Cancel the request
        </button>
      </div>
    );
  if (currentRole() !== 'ADMIN') return <p className="hint">Another ADMIN approves or rejects this change.</p>;
  const approve = () =>
    unwrap(
      client.POST('/v1/change-requests/{id}/approve', {
        ...path,
        body: request.preview_hash ? { preview_hash: request.preview_hash } : {},
      }),
    ).then((answer) =>
      onDecided(
        answer.status === 'APPLIED'
          ? { ok: true, text: 'Approved and applied.' }
          : { ok: false, text: `It could not apply any more: ${answer.reason ?? answer.status}` },
      ),
    );
  return (
    <>
      <div className="actions">
        <button type="button" className="primary" disabled={busy} onClick={() => void run(approve)}>
          {busy ? 'Working…' : 'Approve and apply'}
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => setRejecting(true)}>
          Reject…
        </button>
      </div>
      {rejecting && (
        <Dialog
          title="Reject this change"
          confirm="Reject"
          danger
          busy={busy}
          onClose={() => setRejecting(false)}
          onConfirm={(form) =>
            void run(() =>
              unwrap(
                client.POST('/v1/change-requests/{id}/reject', {
                  ...path,
                  body: { reason: String(form.get('reason') ?? '').trim() },
                }),
              ).then(() => {
                setRejecting(false);
                onDecided({ ok: true, text: 'Change request rejected.' });
              }),
            )
          }
        >
          <label className="stack">
            <span>Reason (the requester sees it)</span>
            <textarea name="reason" required maxLength={1000} rows={3} />
          </label>
        </Dialog>
      )}
    </>
  );
}
