/**
 * One delivery attempt: the event body POSTed with the Standard Webhooks
 * headers, to the address the URL policy checked, within the timeout, never
 * following a redirect. Any 2xx is success; everything else is a failure with
 * a reason a person can read (no secret, no body of the receiver's).
 */
import { inSpan } from '../../lib/tracing.js';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { type ResolvedAddress, resolveTarget, type UrlPolicy, UrlRefusedError } from './webhook-url-policy.js';

/**
 * `v1,<base64 HMAC-SHA256>` of `{id}.{timestamp}.{body}` per secret (keyed by
 * its UTF-8 bytes), space-separated: the Standard Webhooks signature. Written
 * with node:crypto rather than the standardwebhooks package, whose signer
 * takes a secret's bytes as Latin-1; the tests verify with that package.
 */
export function signatureHeader(id: string, timestamp: number, body: string, secrets: readonly string[]): string {
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
    )
    .join(' ');
}

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface Attempt {
  url: string;
  eventId: string;
  body: string;
  secrets: readonly string[];
  /** The traceparent of the change that wrote the event, which the attempt's trace links to. */
  traceparent?: string | null;
}

const MAX_ERROR_LENGTH = 500;

/** Connections kept open between attempts: a busy receiver is not asked for a new TLS handshake per event. */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

/** node's net asks for every address (`all`) when it may race IPv4 and IPv6; either way it gets the checked one. */
function fixedLookup(target: ResolvedAddress): LookupFunction {
  return (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as unknown as (err: null, addresses: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
}

/** Calls `listener` once `signal` aborts (at once if it has); answers what stops listening. */
function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => {};
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/** `work`, or the signal's reason once it aborts; its listener removed either way. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let stopListening = () => {};
  const aborted = new Promise<never>((_, reject) => {
    stopListening = onAbort(signal, () => reject(signal.reason));
  });
  return Promise.race([work, aborted]).finally(() => stopListening());
}

function reasonOf(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const text = e.code ? `${e.message ?? 'connection failed'} (${e.code})` : (e.message ?? String(err));
  return text.slice(0, MAX_ERROR_LENGTH);
}

export function createWebhookSender(options: { policy: UrlPolicy; timeoutMs: number }) {
  const { policy, timeoutMs } = options;

  /** Resolves, checks and POSTs, all before `signal` (the timeout, or the instance stopping). */
  async function post(attempt: Attempt, signal: AbortSignal): Promise<number> {
    const url = new URL(attempt.url);
    // A resolver that does not answer must not hold the attempt past its deadline.
    const target = await untilAborted(resolveTarget(url, policy), signal);
    const timestamp = Math.floor(Date.now() / 1000);
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<number>((resolve, reject) => {
      const request = transport.request(
        url,
        {
          method: 'POST',
          agent: agents[url.protocol as 'http:' | 'https:'],
          lookup: fixedLookup(target),
          signal,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(attempt.body),
            'user-agent': 'feegate-webhooks/1',
            'webhook-id': attempt.eventId,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signatureHeader(attempt.eventId, timestamp, attempt.body, attempt.secrets),
          },
        },
        (response) => {
          // The answer's body is not needed: read and drop it so the connection can be reused.
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(attempt.body);
    });
  }

  /** `stop` cuts the attempt short when the instance stops. */
  async function attemptOnce(attempt: Attempt, stop?: AbortSignal): Promise<AttemptOutcome> {
    const started = performance.now();
    // Its secret did not open (logged by the data layer): nothing is sent unsigned.
    if (attempt.secrets.length === 0)
      return { ok: false, statusCode: null, error: 'the secret does not open: set it again', durationMs: 0 };
    // A timer cleared and a listener removed when the attempt ends: AbortSignal.timeout (and .any over it)
    // would keep each attempt's request reachable for the whole timeout, 5,000 of them at 500 deliveries/s.
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort(new Error('timeout'));
    }, timeoutMs);
    const unlinkStop = stop ? onAbort(stop, () => abort.abort(stop.reason)) : () => {};
    const done = (statusCode: number | null, error: string | null): AttemptOutcome => ({
      ok: error === null,
      statusCode,
      error,
      durationMs: performance.now() - started,
    });
    try {
      const status = await post(attempt, abort.signal);
      if (status >= 200 && status < 300) return done(status, null);
      if (status >= 300 && status < 400) return done(status, `redirect (${status}) not followed`);
      return done(status, `the receiver answered ${status}`);
    } catch (err) {
      if (timedOut) return done(null, `no answer within ${timeoutMs / 1000} s`);
      if (abort.signal.aborted) return done(null, 'interrupted');
      if (err instanceof UrlRefusedError) return done(null, `refused: the URL ${err.message}`);
      return done(null, reasonOf(err));
    } finally {
      clearTimeout(timer);
      unlinkStop();
    }
  }

  return {
    /** Each attempt is a trace of its own (the event's request ended long ago), named by the event it carries and linked to its change. */
    attempt: (attempt: Attempt, stop?: AbortSignal): Promise<AttemptOutcome> =>
      inSpan('webhook.deliver', { 'feegate.event.id': attempt.eventId }, () => attemptOnce(attempt, stop), {
        root: true,
        linkedTo: attempt.traceparent,
      }),
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;
