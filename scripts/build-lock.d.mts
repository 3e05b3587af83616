/** Types of scripts/build-lock.mjs for the tests. */
export function whileHoldingLock<T>(dir: string, work: () => Promise<T>, options?: { giveUpMs?: number }): Promise<T>;
