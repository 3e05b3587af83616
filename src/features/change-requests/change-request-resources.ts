/** A change request as the API answers it, and the hash that names a preview exactly. */
import { createHash } from 'node:crypto';
import type { ChangeRequestRow, ChangeRequestStatus, Person, StoredRequest } from './change-requests-dal.js';

export interface ChangeRequestResource {
  id: string;
  status: ChangeRequestStatus;
  operation: string;
  request: StoredRequest;
  preview: unknown;
  requested_by: Person;
  reviewed_by: Person | null;
  reason: string | null;
  create_date: string;
  expires_at: string;
  decided_at: string | null;
  applied_at: string | null;
  result: unknown;
}

export function toChangeRequestResource(row: ChangeRequestRow): ChangeRequestResource {
  return {
    id: row.id,
    status: row.status,
    operation: row.operation,
    request: row.request,
    preview: row.preview,
    requested_by: row.requestedBy,
    reviewed_by: row.reviewedBy,
    reason: row.reason,
    create_date: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    decided_at: row.decidedAt?.toISOString() ?? null,
    applied_at: row.appliedAt?.toISOString() ?? null,
    result: row.result ?? null,
  };
}

/** `value` with every object's keys in order: a preview read back from jsonb names the same hash as when made. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)]));
}

/** SHA-256 of a preview's JSON with its keys in order: what the approver saw, exactly. */
export function previewHash(preview: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(sortedKeys(preview)))
    .digest('hex');
}
