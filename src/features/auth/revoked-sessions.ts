/**
 * The logins revoked recently enough that tokens of theirs may still be alive,
 * held in memory so that verifying a token reads no database. Filled at start,
 * then by pushed notices; while the push channel is down (a notice may be
 * missed) every check asks the database instead, and on reconnect the set is
 * loaded again.
 */
export interface RevokedSessionsDeps {
  /** How long after its revocation a login's tokens can still be alive. */
  ttlMs: number;
  /** Logins revoked after `since`. */
  loadRevokedSince(since: Date): Promise<string[]>;
  isRevokedInDatabase(sessionId: string): Promise<boolean>;
  onReloadError?(err: unknown): void;
}

export function createRevokedSessions(deps: RevokedSessionsDeps) {
  /** Session id → when it can be forgotten (ms since the epoch). */
  const revoked = new Map<string, number>();
  let connected = false;
  let reloading: Promise<void> | undefined;

  const add = (sessionId: string) => {
    revoked.set(sessionId, Date.now() + deps.ttlMs);
    if (revoked.size % 1024 === 0) forgetExpired();
  };

  const forgetExpired = () => {
    const t = Date.now();
    for (const [id, until] of revoked) if (until <= t) revoked.delete(id);
  };

  async function reload(): Promise<void> {
    const ids = await deps.loadRevokedSince(new Date(Date.now() - deps.ttlMs));
    for (const id of ids) add(id);
    forgetExpired();
  }

  return {
    /** A login revoked here or pushed from another instance. */
    add,

    async isRevoked(sessionId: string): Promise<boolean> {
      if (!connected) return deps.isRevokedInDatabase(sessionId);
      return revoked.has(sessionId);
    },

    /**
     * Memory is trusted only once it holds everything revoked so far: on
     * (re)connection the set is loaded first, then trusted.
     */
    setConnected(value: boolean): Promise<void> {
      connected = false;
      if (!value) {
        reloading = undefined;
        return Promise.resolve();
      }
      const attempt = reload().then(
        () => {
          if (reloading === attempt) connected = true;
        },
        (err) => deps.onReloadError?.(err),
      );
      reloading = attempt;
      return attempt;
    },

    /** Resolves when the last (re)connection's load has finished. */
    ready(): Promise<void> {
      return reloading ?? Promise.resolve();
    },
  };
}

export type RevokedSessions = ReturnType<typeof createRevokedSessions>;
