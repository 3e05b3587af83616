/**
 * A fee change held for approval (contract section 23) is answered 202 with its
 * change request and a Location naming it: the fee routes answer it, the change
 * requests feature serves it, so the shape and the path live here.
 */
import type { HeldForApproval } from '../db/unit-of-work.js';

export type { HeldForApproval } from '../db/unit-of-work.js';

/** Where the API answers change request `id`. */
export const changeRequestPath = (id: string) => `/v1/change-requests/${id}`;

export const isHeld = (answer: unknown): answer is HeldForApproval =>
  typeof answer === 'object' && answer !== null && 'change_request' in answer;

/** The answer of a held change: 202, its change request, and where it lives. */
export const heldAnswer = (held: HeldForApproval) => ({
  status: 202,
  payload: held,
  location: changeRequestPath(held.change_request.id),
});
