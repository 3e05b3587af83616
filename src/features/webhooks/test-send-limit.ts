/**
 * Test sends per customer per minute (WEBHOOK_TEST_SENDS_PER_CUSTOMER_PER_MINUTE):
 * one call of the mock payment notification queues an event for each of up to
 * 20 subscriptions, so a customer calling it in a loop would fill the queue
 * (and, towards a slow receiver, its share of the attempts in flight). Counted
 * per customer, whoever calls, before anything is written.
 */
import { createPerMinuteLimit, type PerMinuteLimit } from '../../lib/per-minute-limit.js';
import type { SharedCounters } from '../../lib/shared-counters.js';

export function createTestSendLimit(options: { counters: SharedCounters; perMinute: number }) {
  return createPerMinuteLimit({
    ...options,
    refusal: (max) =>
      `This customer has sent ${max} test events this minute, the most allowed; retry after the number of seconds in Retry-After.`,
  });
}

export type TestSendLimit = PerMinuteLimit;
