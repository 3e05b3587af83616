/**
 * Records when keys are used without making authentication wait on a write:
 * uses are collected in memory and written in one statement per interval,
 * through the unit of work like every write (no audit record: a use changes no key).
 */
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { SYSTEM_CONTEXT } from '../../lib/change-context.js';
import type { ApiKeysDal } from './api-keys-dal.js';

export function createLastUseRecorder(options: {
  uow: UnitOfWork<{ apiKeys: Pick<ApiKeysDal, 'recordLastUse'> }>;
  intervalMs: number;
  onError?(err: unknown): void;
}) {
  let pending = new Map<string, Date>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      const uses = [...batch].map(([id, at]) => ({ id, at }));
      await options.uow.write(SYSTEM_CONTEXT, ({ dal }) => dal.apiKeys.recordLastUse(uses));
    } catch (err) {
      // Keep the uses for the next attempt, unless newer ones arrived meanwhile.
      for (const [id, at] of batch) if (!pending.has(id)) pending.set(id, at);
      options.onError?.(err);
    }
  }

  return {
    touch(keyId: string, at: Date = new Date()): void {
      pending.set(keyId, at);
    },
    start(): void {
      timer = setInterval(() => {
        flushing = flushing.then(flush);
      }, options.intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}

export type LastUseRecorder = ReturnType<typeof createLastUseRecorder>;
