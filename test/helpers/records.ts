/** What a change left behind in the harness's database: its audit records and its domain events. */
import { eq } from 'drizzle-orm';
import { auditEvents, domainEvents } from '../../src/db/schema.js';
import type { Harness } from './app.js';

export function recordsOf(h: Harness) {
  // Read through the harness on each call: each test has a database of its own.
  const db = () => h.db.current.database.db;
  return {
    auditOf: (action: string) => db().select().from(auditEvents).where(eq(auditEvents.action, action)),
    eventsOf: (type: string) => db().select().from(domainEvents).where(eq(domainEvents.type, type)),
  };
}
