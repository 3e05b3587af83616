/**
 * One page of a customer's records, of one status or all, newest first, with
 * their total: how the scheduled-change and change-request listings page.
 */
import { and, count, desc, eq } from 'drizzle-orm';
import type { PgColumn, PgTable, SelectedFields } from 'drizzle-orm/pg-core';
import { offsetOf, type PageRequest } from '../lib/pagination.js';
import type { Db } from './database.js';

type Listed = PgTable & { customerId: PgColumn; status: PgColumn; createdAt: PgColumn; id: PgColumn };

export async function newestFirstPage<Row>(
  db: Db,
  table: Listed,
  columns: SelectedFields,
  customerId: string,
  status: string | undefined,
  page: PageRequest,
): Promise<{ rows: Row[]; total: number }> {
  const where = and(eq(table.customerId, customerId), status === undefined ? undefined : eq(table.status, status));
  const [totalRow] = await db.select({ total: count() }).from(table).where(where);
  const rows = await db
    .select(columns)
    .from(table)
    .where(where)
    .orderBy(desc(table.createdAt), desc(table.id))
    .limit(page.size)
    .offset(offsetOf(page));
  // The caller's columns give its row type; Drizzle cannot carry it through a generic table.
  return { rows: rows as Row[], total: totalRow?.total ?? 0 };
}
