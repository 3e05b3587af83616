/**
 * Assignment requests per customer per minute (ASSIGNMENTS_PER_CUSTOMER_PER_MINUTE):
 * every change of a customer's fee rules may write history for each merchant
 * it touches, and that history is kept, so one customer's requests are capped
 * whoever sends them (any token or key of the customer). Whatever changes fee
 * rules on a customer's behalf (today bulk-assign and /all) takes one before it
 * touches the database. Counted in a fixed window of a minute, shared by every
 * instance through Redis when configured (lib/per-minute-limit.ts).
 */
import { createPerMinuteLimit, type PerMinuteLimit } from '../../lib/per-minute-limit.js';
import type { SharedCounters } from '../../lib/shared-counters.js';

export function createAssignmentLimit(options: { counters: SharedCounters; perMinute: number }) {
  return createPerMinuteLimit({ ...options, what: 'assignment requests' });
}

export type AssignmentLimit = PerMinuteLimit;
