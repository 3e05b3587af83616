/**
 * The one error hierarchy. Services throw these; the error-handler plugin maps
 * them (and Fastify's own errors) to RFC 9457 problem details in one place.
 * A code's status, title and default detail come from the catalogue
 * (src/error-catalogue.ts): each class takes only the codes of its status.
 */
import { type CodeOf, type ErrorCode, errorEntry } from './error-catalogue.js';

export interface FieldError {
  field: string;
  message: string;
}

export interface AppErrorOptions {
  /** What went wrong here, when the catalogue's detail of the code says too little. */
  detail?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  /** Extra members of the problem document (e.g. the unknown ids). */
  extensions?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    options: AppErrorOptions = {},
  ) {
    const entry = errorEntry(code);
    const detail = options.detail ?? entry.detail;
    super(detail);
    this.name = new.target.name;
    this.status = entry.status;
    this.title = entry.title;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

export class BadRequestError extends AppError {
  constructor(code: CodeOf<400>, detail?: string, errors?: FieldError[]) {
    super(code, { detail, errors });
  }
}

export class ValidationError extends BadRequestError {
  constructor(errors: FieldError[], detail?: string) {
    super('validation_failed', detail, errors);
  }
}

export class UnauthorizedError extends AppError {
  constructor(code: CodeOf<401>, detail?: string) {
    super(code, {
      detail,
      headers: { 'www-authenticate': 'Bearer realm="feegate", ApiKey realm="feegate" header="X-Api-Key"' },
    });
  }
}

export class ForbiddenError extends AppError {
  constructor(code: CodeOf<403>, detail?: string) {
    super(code, { detail });
  }
}

export class NotFoundError extends AppError {
  constructor(code: CodeOf<404>, detail?: string) {
    super(code, { detail });
  }
}

export class ConflictError extends AppError {
  constructor(code: CodeOf<409>, detail?: string, extensions: Record<string, unknown> = {}) {
    super(code, { detail, extensions });
  }
}

/** The first request with this Idempotency-Key is still being processed, here or on another instance. */
export class IdempotencyKeyInUseError extends AppError {
  constructor() {
    super('idempotency_key_in_use', { headers: { 'retry-after': '1' } });
  }
}

export class UnprocessableError extends AppError {
  constructor(code: CodeOf<422>, detail?: string, extensions: Record<string, unknown> = {}) {
    super(code, { detail, extensions });
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(code: CodeOf<503>, detail?: string, retryAfterSeconds = 1) {
    super(code, { detail, headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

/** The client closed the connection before the answer: nobody reads this one, it only stops work. */
export class ClientClosedRequestError extends AppError {
  constructor() {
    super('client_closed_request');
  }
}

export class TooManyAttemptsError extends AppError {
  constructor(retryAfterSeconds: number) {
    super('too_many_login_attempts', { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

/**
 * A key's own rate limit, the per-address limit of login and refresh, or a
 * customer's assignments per minute is used up. With `limit` (a limit counted
 * outside @fastify/rate-limit), the answer also carries the RateLimit-* headers.
 */
export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, limit?: { max: number; detail: string }) {
    super('rate_limited', {
      detail: limit?.detail,
      headers: {
        'retry-after': String(retryAfterSeconds),
        ...(limit
          ? {
              'ratelimit-limit': String(limit.max),
              'ratelimit-remaining': '0',
              'ratelimit-reset': String(retryAfterSeconds),
            }
          : {}),
      },
    });
  }
}

/**
 * Another transaction holds a customer's assignment lock. Not an answer: it
 * ends the transaction that tried, so the write can wait for its turn without
 * holding a connection (src/db/customer-locks.ts).
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
