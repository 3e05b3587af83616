/** Webhooks: subscribe (the secret rule shown), list, enable and disable, delete, send a test; a subscription's deliveries, retried by hand. */
import { useState } from 'react';
import { type Schemas, WEBHOOK_EVENT_TYPES } from '../../../clients/typescript/index';
import { ApiError, client, describeError, unwrap } from '../api';
import { Dialog } from '../dialog';
import { Empty, ErrorNote, FormSubmit, formatDate, Loading, Pager, useLoad } from '../ui';

type Webhook = Schemas['Webhook'];
type EventType = Schemas['CreateWebhookRequest']['notification_type'][number];

/**
 * The events a subscription may name, from the OpenAPI document (the generated
 * client); WEBHOOK_TEST is left out, since it is sent whatever a subscription lists.
 */
const EVENT_TYPES: EventType[] = WEBHOOK_EVENT_TYPES.filter((type) => type !== 'WEBHOOK_TEST');

/** The problem's detail, and for a refused field which one and why (the secret rule, the URL policy). */
function describeRefusal(error: unknown): string {
  const fields = error instanceof ApiError ? (error.problem.body?.errors ?? []) : [];
  return [describeError(error), ...fields.map((f) => `${f.field} ${f.message}.`)].join(' ');
}

const SECRET_RULE =
  'At least 8 characters, with an upper-case letter and a character that is neither a letter nor a digit. It signs every delivery and is never shown again.';

export function WebhooksPage() {
  const [page, setPage] = useState(0);
  const [selected, setSelected] = useState<Webhook>();
  const [deleting, setDeleting] = useState<Webhook>();
  const [message, setMessage] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [hooks, reload] = useLoad(
    () => unwrap(client.GET('/v1/webhooks', { params: { query: { page, size: 20 } } })),
    [page],
  );

  const act = async (what: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      await what();
      setMessage(done);
      reload();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  const path = (hook: Webhook) => ({ params: { path: { id: hook.id } } });

  return (
    <section aria-labelledby="webhooks-title">
      <div className="page-head">
        <h1 id="webhooks-title">Webhooks</h1>
      </div>
      <CreateWebhook onCreated={reload} />
      {message && (
        <p className="state" role="status">
          {message}
        </p>
      )}
      {error && <ErrorNote message={error} />}
      {hooks.state === 'loading' && <Loading what="webhooks" />}
      {hooks.state === 'error' && <ErrorNote message={hooks.message} />}
      {hooks.state === 'ready' &&
        (hooks.value.data.length === 0 ? (
          <Empty>No webhooks yet. Subscribe a URL above.</Empty>
        ) : (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {hooks.value.data.map((hook) => (
                  <tr key={hook.id}>
                    <td data-label="URL">
                      <code>{hook.notification_url}</code>
                    </td>
                    <td data-label="Events">{hook.notification_type.join(', ')}</td>
                    <td data-label="Status">{hook.status}</td>
                    <td data-label="Created">{formatDate(hook.create_date)}</td>
                    <td data-label="Actions" className="actions">
                      <button type="button" onClick={() => setSelected(hook)}>
                        Deliveries
                      </button>
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() =>
                          void act(
                            () => unwrap(client.POST('/v1/webhooks/{id}/test', path(hook))),
                            `A test event is on its way to ${hook.notification_url}.`,
                          )
                        }
                      >
                        Send test event
                      </button>
                      <button
                        type="button"
                        disabled={busy}
                        onClick={() => {
                          const status = hook.status === 'ENABLED' ? 'DISABLED' : 'ENABLED';
                          void act(
                            () => unwrap(client.PATCH('/v1/webhooks/{id}', { ...path(hook), body: { status } })),
                            `${hook.notification_url} is ${status.toLowerCase()}.`,
                          );
                        }}
                      >
                        {hook.status === 'ENABLED' ? 'Disable' : 'Enable'}
                      </button>
                      <button type="button" className="danger" onClick={() => setDeleting(hook)}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={hooks.value.page} onPage={setPage} label={['webhook', 'webhooks']} />
          </>
        ))}
      {deleting && (
        <Dialog
          title="Delete this webhook?"
          confirm="Delete webhook"
          danger
          busy={busy}
          onClose={() => setDeleting(undefined)}
          onConfirm={() => {
            const hook = deleting;
            setDeleting(undefined);
            if (selected?.id === hook.id) setSelected(undefined);
            void act(
              () => unwrap(client.DELETE('/v1/webhooks/{id}', path(hook))),
              `${hook.notification_url} was deleted.`,
            );
          }}
        >
          <p>
            <code>{deleting.notification_url}</code> gets no more events; its pending deliveries are dropped.
          </p>
        </Dialog>
      )}
      {selected && <Deliveries hook={selected} />}
    </section>
  );
}

function CreateWebhook({ onCreated }: { onCreated: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: React.FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const types = form.getAll('types').map(String) as EventType[];
    if (types.length === 0) {
      setError('Choose at least one event.');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await unwrap(
        client.POST('/v1/webhooks', {
          body: {
            notification_url: String(form.get('url')),
            notification_type: types,
            secret_key: String(form.get('secret')),
          },
        }),
      );
      formElement.reset();
      onCreated();
    } catch (e) {
      setError(describeRefusal(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <details className="panel">
      <summary>Add a webhook</summary>
      <form onSubmit={submit} className="grid-form">
        <label>
          <span>URL (https://)</span>
          <input name="url" type="url" required placeholder="https://hooks.example.com/feegate" />
        </label>
        <label>
          <span>Signing secret</span>
          <input name="secret" type="password" required minLength={8} aria-describedby="secret-rule" />
        </label>
        <p id="secret-rule" className="hint">
          {SECRET_RULE}
        </p>
        <fieldset className="choices">
          <legend>Events</legend>
          {EVENT_TYPES.map((type) => (
            <label key={type} className="inline">
              <input type="checkbox" name="types" value={type} /> <code>{type}</code>
            </label>
          ))}
        </fieldset>
        <FormSubmit error={error} busy={busy} label="Add webhook" busyLabel="Adding…" />
      </form>
    </details>
  );
}

function Deliveries({ hook }: { hook: Webhook }) {
  const [page, setPage] = useState(0);
  const [error, setError] = useState<string>();
  const [deliveries, reload] = useLoad(
    () =>
      unwrap(
        client.GET('/v1/webhooks/{id}/deliveries', {
          params: { path: { id: hook.id }, query: { page, size: 20 } },
        }),
      ),
    [hook.id, page],
  );
  const retry = async (delivery: Schemas['WebhookDelivery']) => {
    setError(undefined);
    try {
      await unwrap(
        client.POST('/v1/webhooks/{id}/deliveries/{delivery_id}/retry', {
          params: { path: { id: hook.id, delivery_id: delivery.id } },
        }),
      );
      reload();
    } catch (e) {
      setError(describeError(e));
    }
  };
  return (
    <section aria-labelledby="deliveries-title" className="panel">
      <div className="page-head">
        <h2 id="deliveries-title">Deliveries to {hook.notification_url}</h2>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      {error && <ErrorNote message={error} />}
      {deliveries.state === 'loading' && <Loading what="deliveries" />}
      {deliveries.state === 'error' && <ErrorNote message={deliveries.message} />}
      {deliveries.state === 'ready' &&
        (deliveries.value.data.length === 0 ? (
          <Empty>No deliveries yet.</Empty>
        ) : (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Last attempt</th>
                  <th scope="col">Next attempt</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.value.data.map((delivery) => (
                  <tr key={delivery.id}>
                    <td data-label="Event">
                      <code>{delivery.event_type}</code>
                    </td>
                    <td data-label="Status">{delivery.status}</td>
                    <td data-label="Attempts">{delivery.attempts}</td>
                    <td data-label="Last answer">
                      {delivery.last_status_code ?? '—'}
                      {delivery.last_error && <span className="details"> {delivery.last_error}</span>}
                    </td>
                    <td data-label="Last attempt">{formatDate(delivery.last_attempt_at)}</td>
                    <td data-label="Next attempt">{formatDate(delivery.next_attempt_at)}</td>
                    <td data-label="Actions">
                      <button type="button" onClick={() => void retry(delivery)}>
                        Retry now
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager page={deliveries.value.page} onPage={setPage} label={['delivery', 'deliveries']} />
          </>
        ))}
    </section>
  );
}
