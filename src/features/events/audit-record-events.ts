/**
 * Audit records as domain events (AUDIT_RECORD, contract section 25): written
 * with the record, in its change's transaction, so a customer's SIEM receives
 * every record and no record of a change that rolled back. Only while one of the
 * customer's enabled subscriptions lists the type: the other changes pay one
 * indexed probe, not an event to fan out.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database-core.js';
import { queryRows } from '../../db/database-core.js';
import { webhookSubscriptions } from '../../db/schema.js';
import type { ChangeContext } from '../../lib/change-context.js';
import { createAuditDal } from '../audit/audit-dal.js';
import { auditResource } from '../audit/audit-resource.js';
import { insertEvents } from './events-dal.js';

export const AUDIT_RECORD = 'AUDIT_RECORD';

/** Whether one of the customer's enabled subscriptions lists AUDIT_RECORD. */
export async function subscribesToAuditRecords(tx: Db, customerId: string): Promise<boolean> {
  const rows = await queryRows(
    tx,
    sql`SELECT 1 FROM ${webhookSubscriptions}
        WHERE ${webhookSubscriptions.customerId} = ${customerId} AND ${webhookSubscriptions.status} = 'ENABLED'
          AND ${AUDIT_RECORD} = ANY(${webhookSubscriptions.notificationTypes})
        LIMIT 1`,
  );
  return rows.length > 0;
}

/** The AUDIT_RECORD event of record `auditId`, when its customer subscribes to them. */
export async function emitAuditRecord(tx: Db, context: ChangeContext, customerId: string, auditId: number) {
  if (!(await subscribesToAuditRecords(tx, customerId))) return;
  const row = await createAuditDal(tx).find(auditId);
  if (row) await insertEvents(tx, context, [{ type: AUDIT_RECORD, customerId, data: auditResource(row) }]);
}
