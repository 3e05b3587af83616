/** The audit trail as a customer reads it (docs/fee-rules-history.md#what-the-api-offers): its own records, newest first. */
import { BadRequestError, ForbiddenError } from '../../errors.js';
import { parseInstant } from '../../lib/instant.js';
import { type Page, type PageRequest, toPage } from '../../lib/pagination.js';
import { isMerchantCaller, type Principal } from '../../lib/principal.js';
import { type TakenBatch, takeEach } from '../../lib/streamed-batches.js';
import type { AuditDal, AuditRow } from './audit-dal.js';
import { type AuditEventResource, auditResource } from './audit-resource.js';

export type { AuditEventResource };

export interface AuditListRequest extends PageRequest {
  action?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export interface AuditExportRequest {
  from: string;
  to: string;
  format?: AuditExportFormat | undefined;
}

export type AuditExportFormat = 'ndjson' | 'csv';

/** An export reads its records as they are written out: the caller consumes `records` batch by batch. */
export interface AuditExport {
  format: AuditExportFormat;
  records: AsyncIterable<TakenBatch<AuditEventResource>>;
}

/** The longest range one export covers: a year, leap or not. */
export const EXPORT_MAX_DAYS = 366;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows per read of an export: enough to amortise a query, few enough to hold. */
const EXPORT_BATCH_ROWS = 1000;

async function* resources(batches: AsyncIterable<AuditRow[]>): AsyncGenerator<TakenBatch<AuditEventResource>> {
  for await (const batch of batches) yield takeEach(batch, auditResource);
}

/** from and to as instants, from not after to. */
function rangeOf(request: { from?: string | undefined; to?: string | undefined }) {
  const from = request.from === undefined ? undefined : parseInstant('from', request.from);
  const to = request.to === undefined ? undefined : parseInstant('to', request.to);
  if (from && to && from > to) {
    throw new BadRequestError('invalid_time_range', 'from must not be after to.', [
      { field: 'from', message: 'is after to' },
    ]);
  }
  return { from, to };
}

export function createAuditService(deps: { auditDal: Pick<AuditDal, 'list' | 'inBatches'> }) {
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
      const { from, to } = rangeOf(request);
      const { rows, total } = await auditDal.list(
        { customerId: principal.customerId, action: request.action, from, to },
        request,
      );
      const data = rows.map(auditResource);
      return toPage(data, total, request);
    },

    /** Every record of [from, to), oldest first (contract section 25): a range of at most EXPORT_MAX_DAYS. */
    exportRange(principal: Principal, request: AuditExportRequest): AuditExport {
      assertMayRead(principal);
      const { from, to } = rangeOf(request) as { from: Date; to: Date };
      if (to.getTime() - from.getTime() > EXPORT_MAX_DAYS * DAY_MS) {
        throw new BadRequestError('invalid_time_range', `An export covers at most ${EXPORT_MAX_DAYS} days.`, [
          { field: 'to', message: `is more than ${EXPORT_MAX_DAYS} days after from` },
        ]);
      }
      const batches = auditDal.inBatches({ customerId: principal.customerId, from, to }, EXPORT_BATCH_ROWS);
      return { format: request.format ?? 'ndjson', records: resources(batches) };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
