/**
 * Queries over every column that holds a secret at rest, for the upgrade at
 * start, `feegate secrets rotate` and `feegate secrets check`. The columns are
 * named here once; each feature's DAL seals and opens its own on the way.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { queryRows } from '../../db/database.js';

/** A column of secrets: `row` is the column that identifies a row (bound into the encryption). */
export interface SecretColumn {
  table: string;
  column: string;
  row: string;
  /** encrypted by the ring, or kept as an HMAC digest of a code. */
  kind: 'encrypted' | 'digest';
}

export const SECRET_COLUMNS: readonly SecretColumn[] = [
  { table: 'digest_keys', column: 'key', row: 'id', kind: 'encrypted' },
  { table: 'signing_keys', column: 'private_jwk', row: 'kid', kind: 'encrypted' },
  { table: 'users', column: 'totp_secret', row: 'id', kind: 'encrypted' },
  { table: 'webhook_subscriptions', column: 'secret', row: 'id', kind: 'encrypted' },
  { table: 'webhook_subscriptions', column: 'previous_secret', row: 'id', kind: 'encrypted' },
  { table: 'mail_outbox', column: 'subject', row: 'id', kind: 'encrypted' },
  { table: 'mail_outbox', column: 'body', row: 'id', kind: 'encrypted' },
  { table: 'idempotency_keys', column: 'body', row: 'id', kind: 'encrypted' },
  { table: 'password_reset_codes', column: 'code_hash', row: 'user_id', kind: 'digest' },
  { table: 'user_recovery_codes', column: 'code_hash', row: 'user_id', kind: 'digest' },
];

/** A stored value and the row it is bound to. */
export interface StoredValue {
  row: string;
  value: string;
}

const ENCRYPTED = 'enc:v1:%';
const DIGESTED = 'hmac:v1:%';
/** One lock for the upgrade: instances starting at once take turns. */
const UPGRADE_LOCK = 0x7365_6372;

export function createSecretsDal(db: Db) {
  const at = (c: SecretColumn) => ({
    t: sql.identifier(c.table),
    v: sql.identifier(c.column),
    r: sql.identifier(c.row),
  });

  return {
    /** Held until the transaction ends. */
    async lockUpgrade(): Promise<void> {
      await db.execute(sql`SELECT pg_advisory_xact_lock(${UPGRADE_LOCK})`);
    },

    async digestKey(): Promise<StoredValue | undefined> {
      const [row] = await queryRows<StoredValue>(
        db,
        sql`SELECT id AS row, key AS value FROM digest_keys ORDER BY created_at DESC LIMIT 1`,
      );
      return row;
    },

    async insertDigestKey(id: string, key: string): Promise<void> {
      await db.execute(sql`INSERT INTO digest_keys (id, key) VALUES (${id}, ${key})`);
    },

    /** Values written before secrets were kept at rest: plain text, or a code's bare SHA-256. */
    async legacyValues(c: SecretColumn): Promise<StoredValue[]> {
      const { t, v, r } = at(c);
      return queryRows<StoredValue>(
        db,
        sql`SELECT ${r}::text AS row, ${v} AS value FROM ${t} WHERE ${v} IS NOT NULL AND ${v} NOT LIKE ${c.kind === 'encrypted' ? ENCRYPTED : DIGESTED}`,
      );
    },

    /** How many values each key id encrypts, in every encrypted column. */
    async kidCounts(): Promise<Array<{ table: string; column: string; kid: string; count: number }>> {
      const parts = SECRET_COLUMNS.filter((c) => c.kind === 'encrypted').map((c) => {
        const { t, v } = at(c);
        return sql`SELECT ${c.table}::text AS "table", ${c.column}::text AS "column", split_part(${v}, ':', 3) AS kid,
          count(*)::int AS count FROM ${t} WHERE ${v} LIKE ${ENCRYPTED} GROUP BY 3`;
      });
      return queryRows(db, sql.join(parts, sql` UNION ALL `));
    },

    /** The next `limit` values after row `after` (in row order) not encrypted under `kid`. */
    async staleBatch(c: SecretColumn, kid: string, after: string, limit: number): Promise<StoredValue[]> {
      const { t, v, r } = at(c);
      return queryRows<StoredValue>(
        db,
        sql`SELECT ${r}::text AS row, ${v} AS value FROM ${t}
          WHERE ${v} LIKE ${ENCRYPTED} AND split_part(${v}, ':', 3) <> ${kid} AND ${r}::text > ${after}
          ORDER BY ${r}::text LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
      );
    },

    /** Replaces `value` by `next` in its row, unless another change came first. */
    async replace(c: SecretColumn, stored: StoredValue, next: string): Promise<void> {
      const { t, v, r } = at(c);
      await db.execute(sql`UPDATE ${t} SET ${v} = ${next} WHERE ${r}::text = ${stored.row} AND ${v} = ${stored.value}`);
    },
  };
}

export type SecretsDal = ReturnType<typeof createSecretsDal>;
