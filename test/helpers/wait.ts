import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `condition` until it holds; fails the test with `message` once `timeoutMs` has passed. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  message: string,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  while (!(await condition())) {
    assert.ok(Date.now() < deadline, message);
    await sleep(options.intervalMs ?? 20);
  }
}
