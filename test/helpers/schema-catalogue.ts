/**
 * What a database's public schema is made of, as PostgreSQL itself prints it
 * (format_type, pg_get_expr, pg_get_constraintdef, pg_get_indexdef), one line
 * per enum, column, constraint and index, so that two databases built two ways
 * compare as two sorted lists and their difference reads as lines.
 */
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../src/db/database-core.js';

const CATALOGUE = sql`
  SELECT 'enum ' || t.typname || ' (' || string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) || ')' AS line
    FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_enum e ON e.enumtypid = t.oid
   WHERE n.nspname = 'public'
   GROUP BY t.typname
  UNION ALL
  SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
         || CASE WHEN a.attidentity <> '' THEN ' IDENTITY ' || a.attidentity::text ELSE '' END
         || CASE WHEN a.attgenerated <> '' THEN ' GENERATED AS ' || pg_get_expr(d.adbin, d.adrelid)
                 WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)
                 ELSE '' END AS line
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'constraint ' || c.relname || ' ' || k.conname || ': ' || pg_get_constraintdef(k.oid) AS line
    FROM pg_constraint k
    JOIN pg_class c ON c.oid = k.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = 'public' AND k.contype IN ('p', 'u', 'f', 'c', 'x')
  UNION ALL
  SELECT 'index ' || c.relname || ' ' || i.relname || ': ' || pg_get_indexdef(i.oid) AS line
    FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_class c ON c.oid = x.indrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = 'public'
     AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid)
`;

/** The sorted lines of the database's public schema (triggers and functions aside: schema.ts cannot declare them). */
export async function schemaCatalogue(db: Db): Promise<string[]> {
  const rows = await queryRows<{ line: string }>(db, CATALOGUE);
  return rows.map((r) => r.line).sort();
}

/** The lines only one side has, marked by the side; empty when both are the same. */
export function catalogueDrift(migrated: string[], declared: string[]): string[] {
  const inMigrated = new Set(migrated);
  const inDeclared = new Set(declared);
  return [
    ...migrated.filter((line) => !inDeclared.has(line)).map((line) => `only in migrations/: ${line}`),
    ...declared.filter((line) => !inMigrated.has(line)).map((line) => `only in src/db/schema.ts: ${line}`),
  ];
}
