/** Where work with no caller to answer reports what happened: pino's logger is one, a test's silent one another. */
export interface Log {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** A log that keeps nothing, for tools and tests that have no logger. */
export const SILENT_LOG: Log = { warn() {}, info() {} };
