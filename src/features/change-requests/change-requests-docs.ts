/** What the OpenAPI document says of the change request operations; their HTTP is in change-requests-routes.ts. */
import { operationDocs } from '../../schemas/common.js';
import { CHANGE_REQUEST_TTL_DAYS } from './approval-gate.js';

const CALLERS = ' Customer callers only: merchant callers get 403 `forbidden`.';
const ANOTHER_CUSTOMERS =
  " Another customer's request answers 404 `change_request_not_found`, as one that does not exist.";
const REVIEWERS =
  'Only the access token of an ADMIN of the same customer who does not answer for the request: the requester, and for a request asked through an API key the user it belongs to, whoever made or rolled it (through keys made or rolled by keys) and the login user of the same e-mail, get 403 `self_approval`; MEMBER, VIEWER and every API key 403 `insufficient_role`.';
const CLOSED = ' Only a PENDING request: any other answers 409 `change_request_closed` (member `status`).';

export const CHANGE_REQUESTS_DOCS = operationDocs('change requests', {
  listChangeRequests: {
    summary: "List the customer's change requests",
    description: `Newest first (create_date, then id), all or of one status. A request PENDING for ${CHANGE_REQUEST_TTL_DAYS} days expires (EXPIRED), as does a held scheduling still pending at its effective_at.${CALLERS}`,
  },
  getChangeRequest: {
    summary: 'Read a change request with what it would do now',
    description: `The request, its preview when it was made, and for a PENDING one current_preview (its dry run now; when it could no longer apply, \`{ problem: { code, detail } }\`) and preview_hash (SHA-256 of current_preview) to approve exactly that; null for a closed one.${CALLERS}${ANOTHER_CUSTOMERS}`,
  },
  approveChangeRequest: {
    summary: 'Approve a change request: it applies now',
    description:
      `${REVIEWERS} The change is applied in this request's transaction as its own route would apply it now (the replacement rule, history, its events, its audit record naming the change request, requester and approver), waiting its customer's turn like any assignment; the answer is the request, APPLIED with its result, and the event CHANGE_REQUEST_APPROVED. ` +
      'With preview_hash: when what the change would do now is no longer that preview, 409 `preview_changed` with members current_preview and preview_hash, and nothing changes. ' +
      'A change that can no longer apply (a plan retired, every merchant named inactive, a scheduled instant too close) answers 200 with the request FAILED and the reason. Of two approvals at once, one applies and the other gets 409 `change_request_closed`.' +
      CLOSED +
      ANOTHER_CUSTOMERS,
  },
  rejectChangeRequest: {
    summary: 'Reject a change request with a reason',
    description: `${REVIEWERS} REJECTED with the reason; event CHANGE_REQUEST_REJECTED.${CLOSED}${ANOTHER_CUSTOMERS}`,
  },
  cancelChangeRequest: {
    summary: 'Cancel your own change request',
    description: `Only the caller (token or key) that asked for it: any other gets 403 \`not_requester\`. CANCELLED.${CLOSED}${ANOTHER_CUSTOMERS}`,
  },
});
