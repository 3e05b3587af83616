/**
 * The console's only way to the service: the typed client (clients/typescript),
 * the same public endpoints integrators use, with the bearer token added from
 * memory. Failures become ApiError carrying the problem's `detail` (never a
 * stack) and, on 429/503, when to retry.
 */
import { createFeegateClient } from '../../clients/typescript/index';

export { MAX_PAGE_SIZE } from '../../clients/typescript/index';

export interface Problem {
  status: number;
  detail: string;
  code?: string;
  retryAfter?: number;
  /** Extra members of the problem, e.g. payment_plan_ids, merchant_ids, conflicts. */
  extra: Record<string, unknown>;
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

export const client = createFeegateClient(window.location.origin);
client.use({
  onRequest({ request }) {
    if (accessToken) request.headers.set('authorization', `Bearer ${accessToken}`);
    return request;
  },
});

/**
 * Endpoints that are newer than the generated types (key lifecycle, dry runs,
 * history, audit) are called through the same client, typed loosely, and only
 * when the server's document lists them (see features.ts).
 */
type LooseInit = { params?: { query?: Record<string, unknown>; path?: Record<string, string> }; body?: unknown };
type LooseResult = Promise<{ data?: unknown; error?: unknown; response: Response }>;
type LooseMethod = (path: string, init?: LooseInit) => LooseResult;
export const loose = client as unknown as { GET: LooseMethod; POST: LooseMethod; PATCH: LooseMethod; DELETE: LooseMethod };

/** The data of a call, or an ApiError. A 401 on a signed-in call ends the session. */
export async function unwrap<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  let result: Awaited<typeof call>;
  try {
    result = await call;
  } catch {
    throw new ApiError({ status: 0, detail: 'The service could not be reached. Check your connection and try again.', extra: {} });
  }
  const { data, error, response } = result;
  if (response.ok) return data as T;
  const body = (error && typeof error === 'object' ? error : {}) as Record<string, unknown>;
  const retry = Number(response.headers.get('retry-after'));
  const problem: Problem = {
    status: response.status,
    code: typeof body.code === 'string' ? body.code : undefined,
    detail: typeof body.detail === 'string' ? body.detail : `The service answered ${response.status} ${response.statusText}.`.trim(),
    retryAfter: Number.isFinite(retry) && retry > 0 ? retry : undefined,
    extra: body,
  };
  if (response.status === 401 && accessToken) onUnauthorized();
  throw new ApiError(problem);
}

/** One sentence for a person: the problem's detail, and when to retry if the service said so. */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return 'Something went wrong in the console. Reload the page and try again.';
  const { detail, retryAfter, status } = error.problem;
  if (status === 429 && retryAfter) return `${detail} Too many requests: try again in ${retryAfter} s (at ${new Date(Date.now() + retryAfter * 1000).toLocaleTimeString()}).`;
  if (retryAfter) return `${detail} Try again in ${retryAfter} s.`;
  return detail;
}
