/**
 * The one error hierarchy. Services throw these; the error-handler plugin maps
 * them (and Fastify's own errors) to RFC 9457 problem details in one place.
 */
export interface FieldError {
  field: string;
  message: string;
}

export interface AppErrorOptions {
  detail?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Extra members of the problem document (e.g. the unknown ids). */
  extensions?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    options: AppErrorOptions = {},
  ) {
    super(options.detail ?? title);
    this.name = new.target.name;
    this.detail = options.detail ?? title;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

export class BadRequestError extends AppError {
  constructor(code: string, detail: string, errors?: FieldError[]) {
    super(400, code, 'Bad Request', { detail, errors });
  }
}

export class ValidationError extends BadRequestError {
  constructor(errors: FieldError[], detail = 'The request is not valid.') {
    super('validation_failed', detail, errors);
  }
}

export class UnauthorizedError extends AppError {
  constructor(code = 'unauthorized', detail = 'Valid credentials are required.') {
    super(401, code, 'Unauthorized', {
      detail,
      headers: { 'www-authenticate': 'Bearer realm="feegate", ApiKey realm="feegate" header="X-Api-Key"' },
    });
  }
}

export class ForbiddenError extends AppError {
  constructor(code = 'forbidden', detail = 'This kind of caller may not use this operation.') {
    super(403, code, 'Forbidden', { detail });
  }
}

export class NotFoundError extends AppError {
  constructor(code = 'not_found', detail = 'The resource does not exist.') {
    super(404, code, 'Not Found', { detail });
  }
}

export class ConflictError extends AppError {
  constructor(code: string, detail: string) {
    super(409, code, 'Conflict', { detail });
  }
}

export class UnprocessableError extends AppError {
  constructor(code: string, detail: string, extensions: Record<string, unknown> = {}) {
    super(422, code, 'Unprocessable Content', { detail, extensions });
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(code: string, detail: string, retryAfterSeconds = 1) {
    super(503, code, 'Service Unavailable', { detail, headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

/** The client closed the connection before the answer: nobody reads this one, it only stops work. */
export class ClientClosedRequestError extends AppError {
  constructor() {
    super(499, 'client_closed_request', 'Client Closed Request', { detail: 'The client closed the connection before the answer was ready.' });
  }
}

export class TooManyAttemptsError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'too_many_login_attempts', 'Too Many Requests', {
      detail: 'Too many failed logins for this user name from this address, or from all addresses; retry after Retry-After seconds.',
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

/**
 * A key's own rate limit, the per-address limit of login and refresh, or a
 * customer's assignments per minute is used up. With `limit` (a limit counted
 * outside @fastify/rate-limit), the answer also carries the RateLimit-* headers.
 */
export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, limit?: { max: number; detail: string }) {
    super(429, 'rate_limited', 'Too Many Requests', {
      detail: limit?.detail ?? 'Too many requests; retry after the number of seconds in Retry-After.',
      headers: {
        'retry-after': String(retryAfterSeconds),
        ...(limit ? { 'ratelimit-limit': String(limit.max), 'ratelimit-remaining': '0', 'ratelimit-reset': String(retryAfterSeconds) } : {}),
      },
    });
  }
}

/**
 * Another transaction holds a customer's assignment lock. Not an answer: it
 * ends the transaction that tried, so the write can wait for its turn without
 * holding a connection (src/features/fee-rules/customer-locks.ts).
 */
export class CustomerLockedError extends Error {
  override name = 'CustomerLockedError';
}

/** A bad setting in the environment: the process stops with a message naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** An operator's import document that cannot be imported; `path` is a JSON path into it. */
export class ImportError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = 'ImportError';
  }
}

/** A command line the operator typed wrong. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The embedded data directory is held by another process: this one must not touch it. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}
