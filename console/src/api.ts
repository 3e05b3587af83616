/**
 * The console's only way to the service: the typed client (clients/typescript),
 * the same public endpoints integrators use, with the bearer token added from
 * memory. Failures become ApiError carrying the problem's `detail` (never a
 * stack) and, on 429/503, when to retry.
 */
import { createFeegateClient, newIdempotencyKey, type Schemas } from '../../clients/typescript/index';

export { MAX_PAGE_SIZE } from '../../clients/typescript/index';

export interface Problem {
  status: number;
  detail: string;
  code?: string;
  retryAfter?: number;
  /** The service's problem body (payment_plan_ids, merchant_ids, conflicts, ...); absent when the answer was not one. */
  body?: Schemas['Problem'];
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

let accessToken: string | undefined;
let onUnauthorized: () => void = () => {};

export function setAccessToken(token: string | undefined): void {
  accessToken = token;
}
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export const client = createFeegateClient(window.location.origin, { idempotencyKeys: false });
client.use({
  onRequest({ request }) {
    if (accessToken) request.headers.set('authorization', `Bearer ${accessToken}`);
    return request;
  },
});

/**
 * The Idempotency-Key of each submission whose outcome is not known yet (in
 * flight, or lost to a failed connection, a 5xx, a 429 or a 409 in use), by
 * method, URL and body: a double click or a retry after such an error sends the
 * same key, so the change is made once; a new or changed submission gets a fresh one.
 */
const unsettled = new Map<string, string>();
const submissionOf = new WeakMap<Request, string>();
/** Answers the service keeps for the key (2xx, 4xx other than 409 in use and 429): the submission is settled. */
const settles = (status: number) => status < 500 && status !== 429 && status !== 409;
const MAX_UNSETTLED = 100;

client.use({
  async onRequest({ request }) {
    if (!['POST', 'PATCH'].includes(request.method) || request.headers.has('idempotency-key')) return request;
    const submission = `${request.method} ${request.url} ${await request.clone().text()}`;
    let key = unsettled.get(submission);
    if (!key) {
      key = newIdempotencyKey();
      if (unsettled.size >= MAX_UNSETTLED) unsettled.delete(unsettled.keys().next().value!);
      unsettled.set(submission, key);
    }
    submissionOf.set(request, submission);
    request.headers.set('idempotency-key', key);
    return request;
  },
  onResponse({ request, response }) {
    const submission = submissionOf.get(request);
    if (submission !== undefined && settles(response.status)) unsettled.delete(submission);
    return response;
  },
});

/**
 * The data of a call, typed by the operation's 2xx answer in the generated
 * schema (undefined when the answer has no body), or an ApiError. A 401 on a
 * signed-in call ends the session, but for a wrong password (invalid_credentials).
 */
export async function unwrap<Data>(call: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  let result: Awaited<typeof call>;
  try {
    result = await call;
  } catch {
    throw new ApiError({ status: 0, detail: 'The service could not be reached. Check your connection and try again.' });
  }
  const { data, error, response } = result;
  if (response.ok) return data as Data;
  // Every error the service answers is a problem body; a proxy in between may answer something else.
  const body = isProblem(error) ? error : undefined;
  const retry = Number(response.headers.get('retry-after'));
  const problem: Problem = {
    status: response.status,
    code: body?.code,
    detail: body?.detail ?? `The service answered ${response.status} ${response.statusText}.`.trim(),
    retryAfter: Number.isFinite(retry) && retry > 0 ? retry : undefined,
    body,
  };
  // A wrong password of a step-up (own password, two-factor codes) is not a dead session.
  if (response.status === 401 && accessToken && problem.code !== 'invalid_credentials') onUnauthorized();
  throw new ApiError(problem);
}

function isProblem(error: unknown): error is Schemas['Problem'] {
  if (typeof error !== 'object' || error === null) return false;
  const { code, detail } = error as Record<string, unknown>;
  return typeof code === 'string' && typeof detail === 'string';
}

/** One sentence for a person: the problem's detail, and when to retry if the service said so. */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return 'Something went wrong in the console. Reload the page and try again.';
  const { detail, retryAfter, status } = error.problem;
  if (status === 429 && retryAfter)
    return `${detail} Too many requests: try again in ${retryAfter} s (at ${new Date(Date.now() + retryAfter * 1000).toLocaleTimeString()}).`;
  if (retryAfter) return `${detail} Try again in ${retryAfter} s.`;
  return detail;
}
