/**
 * The customers that require a one-time code of every login (require_mfa),
 * held in memory so that refusing a token made without one reads no database.
 * Filled at start, then by pushed notices; while the push channel is down (a
 * notice may be missed) every check asks the database instead, and on
 * reconnect the set is loaded again.
 */
export interface MfaRequirementsDeps {
  loadRequiring(): Promise<string[]>;
  requiresInDatabase(customerId: string): Promise<boolean>;
  onReloadError?(err: unknown): void;
}

export function createMfaRequirements(deps: MfaRequirementsDeps) {
  let requiring = new Set<string>();
  let connected = false;
  let reloading: Promise<void> | undefined;
  /** Changes heard while a load runs: replayed onto what it read, in order, since it may have read before them. */
  let heardDuringLoad: Array<[string, boolean]> | undefined;

  const apply = (set: Set<string>, customerId: string, required: boolean) => {
    if (required) set.add(customerId);
    else set.delete(customerId);
  };

  return {
    /** A change made here or pushed from another instance. */
    changed(customerId: string, required: boolean): void {
      apply(requiring, customerId, required);
      heardDuringLoad?.push([customerId, required]);
    },

    requires(customerId: string): boolean | Promise<boolean> {
      return connected ? requiring.has(customerId) : deps.requiresInDatabase(customerId);
    },

    /** Memory is trusted only once it holds every change so far: on (re)connection the set is loaded first. */
    setConnected(value: boolean): Promise<void> {
      connected = false;
      if (!value) {
        reloading = undefined;
        heardDuringLoad = undefined;
        return Promise.resolve();
      }
      const heard: Array<[string, boolean]> = [];
      heardDuringLoad = heard;
      const attempt = deps.loadRequiring().then(
        (ids) => {
          if (reloading !== attempt) return;
          const loaded = new Set(ids);
          for (const [customerId, required] of heard) apply(loaded, customerId, required);
          requiring = loaded;
          heardDuringLoad = undefined;
          connected = true;
        },
        (err) => deps.onReloadError?.(err),
      );
      reloading = attempt;
      return attempt;
    },

    ready(): Promise<void> {
      return reloading ?? Promise.resolve();
    },
  };
}

export type MfaRequirements = ReturnType<typeof createMfaRequirements>;
