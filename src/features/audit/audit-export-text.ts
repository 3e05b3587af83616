/**
 * The audit export as text written while its records are read (contract
 * section 25): NDJSON (one AuditEvent per line, as GET /v1/audit-events writes
 * it) or CSV (RFC 4180, a header line, CRLF line ends). Only one batch is held
 * at a time, as objects or as text.
 */
import type { Readable } from 'node:stream';
import { streamedText } from '../../lib/streamed-batches.js';
import { AUDIT_EXAMPLE } from './audit-schemas.js';
import type { AuditEventResource, AuditExport, AuditExportFormat } from './audit-service.js';

export const EXPORT_MEDIA_TYPES: Record<AuditExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

export const CSV_COLUMNS = [
  'id',
  'create_date',
  'action',
  'actor_type',
  'actor_id',
  'actor_user',
  'request_id',
  'target_type',
  'target_id',
  'details',
] as const;

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled; null is empty. */
export function csvField(value: string | null): string {
  if (value === null) return '';
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function csvLine(e: AuditEventResource): string {
  const fields = [
    e.id,
    e.create_date,
    e.action,
    e.actor.type,
    e.actor.id,
    e.actor.user,
    e.request_id,
    e.target.type,
    e.target.id,
    JSON.stringify(e.details),
  ];
  return `${fields.map(csvField).join(',')}\r\n`;
}

/** A byte stream of the export; destroying it (a client that hung up) stops the reading after the batch in flight. */
export function auditExportStream(
  { format, records }: AuditExport,
  serialize: (record: AuditEventResource) => string,
): Readable {
  const head = format === 'csv' ? `${CSV_COLUMNS.join(',')}\r\n` : '';
  return streamedText(head, records, format === 'csv' ? csvLine : (e) => `${serialize(e)}\n`);
}

/** The 200 answer of the export in the OpenAPI document: one AuditEvent per NDJSON line, or CSV text. */
export const AUDIT_EXPORT_CONTENT = {
  description: 'The records of the range, oldest first',
  content: {
    'application/x-ndjson': {
      schema: { $ref: 'AuditEvent', description: 'Each line is one AuditEvent' },
      example: AUDIT_EXAMPLE,
    },
    'text/csv': {
      schema: { $ref: 'AuditExportCsv' },
      example: `${CSV_COLUMNS.join(',')}\r\n${csvLine(AUDIT_EXAMPLE)}`,
    },
  },
} as never;
