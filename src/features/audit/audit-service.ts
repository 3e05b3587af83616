/** The audit trail as a customer reads it (docs/fee-rules-history.md#what-the-api-offers): its own records, newest first. */
import { BadRequestError, ForbiddenError } from '../../errors.js';
import { parseInstant } from '../../lib/instant.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import type { AuditDal } from './audit-dal.js';

export interface AuditEventResource {
  id: string;
  action: string;
  actor: { type: string; id: string | null; user: string | null };
  request_id: string | null;
  target: { type: string; id: string | null };
  details: Record<string, unknown>;
  create_date: string;
}

export interface AuditListRequest extends PageRequest {
  action?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export function createAuditService(deps: { auditDal: AuditDal }) {
  const { auditDal } = deps;

  /** The trail is the customer's: merchant callers see none of it. */
  function assertMayRead(principal: Principal): void {
    if (isMerchantCaller(principal))
      throw new ForbiddenError(
        'forbidden',
        'Merchant callers may not read the audit trail; a customer caller reads it.',
      );
  }

  return {
    assertMayRead,

    async list(principal: Principal, request: AuditListRequest): Promise<Page<AuditEventResource>> {
      assertMayRead(principal);
      const from = request.from === undefined ? undefined : parseInstant('from', request.from);
      const to = request.to === undefined ? undefined : parseInstant('to', request.to);
      if (from && to && from > to) {
        throw new BadRequestError('invalid_time_range', 'from must not be after to.', [
          { field: 'from', message: 'is after to' },
        ]);
      }
      const { rows, total } = await auditDal.list(
        { customerId: principal.customerId, action: request.action, from, to },
        request,
      );
      const data = rows.map((e) => ({
        id: String(e.id),
        action: e.action,
        actor: { type: e.actorType, id: e.actorId, user: e.actorUser },
        request_id: e.requestId,
        target: { type: e.targetType, id: e.targetId },
        details: e.details as Record<string, unknown>,
        create_date: e.occurredAt.toISOString(),
      }));
      return toPage(data, total, request);
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
