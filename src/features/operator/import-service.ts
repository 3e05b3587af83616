/**
 * Imports customers, merchants, users, payment plans and assignments from one
 * document, in one transaction, idempotently (upsert by id, users by e-mail).
 * Anything invalid is reported with its JSON path and nothing is written.
 */
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { customers, merchants, paymentPlans, users } from '../../db/schema.js';
import { type ChangeContext, OPERATOR_CONTEXT } from '../../lib/change-context.js';
import { recordAudit } from '../audit/audit-dal.js';
import type { PasswordHasher } from '../auth/password-hasher.js';
import type { FeeRulesDal } from '../fee-rules/fee-rules-dal.js';
import { ImportError } from '../../errors.js';
import { ImportDocument } from './import-schema.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID.test(v));
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => EMAIL.test(v));

export interface ImportSummary {
  customers: number;
  merchants: number;
  users: number;
  payment_plans: number;
  assignments: number;
}

/** '/merchants/3/customer_id' → '$.merchants[3].customer_id' */
function jsonPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path}.${part}`), '$');
}

export function createImportService(deps: { db: Db; hasher: PasswordHasher; feeRulesDal: FeeRulesDal }) {
  const { db, hasher, feeRulesDal } = deps;

  function parse(raw: unknown): ImportDocument {
    const first = Value.Errors(ImportDocument, raw).First();
    if (first) throw new ImportError(jsonPath(first.path), first.message);
    return raw as ImportDocument;
  }

  /** Cross-references inside the document and against what the database already holds. */
  /** Returns the owning customer of every merchant the document assigns plans to. */
  async function checkReferences(doc: ImportDocument): Promise<Set<string>> {
    const ids = (rows: Array<{ id: string }> | undefined) => (rows ?? []).map((r) => r.id.toLowerCase());
    const duplicates = (list: string[], name: string) => {
      const seen = new Set<string>();
      list.forEach((id, i) => {
        if (seen.has(id)) throw new ImportError(`$.${name}[${i}]`, `duplicate ${name === 'users' ? 'email' : 'id'} ${id}`);
        seen.add(id);
      });
    };
    duplicates(ids(doc.customers), 'customers');
    duplicates(ids(doc.merchants), 'merchants');
    duplicates(ids(doc.payment_plans), 'payment_plans');
    duplicates((doc.users ?? []).map((u) => u.email.toLowerCase()), 'users');

    const customerIds = new Set(ids(doc.customers));
    const merchantOwner = new Map((doc.merchants ?? []).map((m) => [m.id.toLowerCase(), m.customer_id.toLowerCase()]));
    const planOwner = new Map((doc.payment_plans ?? []).map((p) => [p.id.toLowerCase(), p.customer_id?.toLowerCase() ?? null]));
    const plan = new Map((doc.payment_plans ?? []).map((p) => [p.id.toLowerCase(), p]));

    const wantedCustomers = [
      ...(doc.merchants ?? []).map((m) => m.customer_id),
      ...(doc.users ?? []).map((u) => u.customer_id),
      ...(doc.payment_plans ?? []).flatMap((p) => (p.customer_id ? [p.customer_id] : [])),
    ].map((id) => id.toLowerCase());
    const missingCustomers = wantedCustomers.filter((id) => !customerIds.has(id));
    if (missingCustomers.length) {
      const rows = await db.select({ id: customers.id }).from(customers).where(inArray(customers.id, [...new Set(missingCustomers)]));
      rows.forEach((r) => customerIds.add(r.id));
    }
    const wantedMerchants = [
      ...(doc.merchants ?? []).map((m) => m.id),
      ...(doc.users ?? []).flatMap((u) => (u.merchant_id ? [u.merchant_id] : [])),
      ...(doc.assignments ?? []).map((a) => a.merchant_id),
    ].map((id) => id.toLowerCase());
    const existingMerchants = wantedMerchants.length
      ? await db.select({ id: merchants.id, customerId: merchants.customerId }).from(merchants).where(inArray(merchants.id, [...new Set(wantedMerchants)]))
      : [];
    for (const m of existingMerchants) {
      const moved = merchantOwner.get(m.id);
      if (moved && moved !== m.customerId) {
        const i = (doc.merchants ?? []).findIndex((x) => x.id.toLowerCase() === m.id);
        throw new ImportError(`$.merchants[${i}].customer_id`, `merchant ${m.id} already belongs to customer ${m.customerId}`);
      }
      if (!merchantOwner.has(m.id)) merchantOwner.set(m.id, m.customerId);
    }
    const wantedPlans = (doc.assignments ?? []).flatMap((a) => a.payment_plan_ids.map((id) => id.toLowerCase())).filter((id) => !plan.has(id));
    if (wantedPlans.length) {
      const rows = await db.select().from(paymentPlans).where(inArray(paymentPlans.id, [...new Set(wantedPlans)]));
      for (const r of rows) {
        planOwner.set(r.id, r.customerId);
        plan.set(r.id, {
          id: r.id,
          payment_method: r.paymentMethod,
          card_brand: r.cardBrand,
          term: r.term,
          commission: Number(r.commission),
          has_installments: r.hasInstallments,
          is_international: r.isInternational,
        });
      }
    }

    (doc.merchants ?? []).forEach((m, i) => {
      if (!customerIds.has(m.customer_id.toLowerCase())) throw new ImportError(`$.merchants[${i}].customer_id`, `unknown customer ${m.customer_id}`);
    });
    (doc.payment_plans ?? []).forEach((p, i) => {
      if (p.customer_id && !customerIds.has(p.customer_id.toLowerCase())) {
        throw new ImportError(`$.payment_plans[${i}].customer_id`, `unknown customer ${p.customer_id}`);
      }
    });
    (doc.users ?? []).forEach((u, i) => {
      const at = `$.users[${i}]`;
      if (!customerIds.has(u.customer_id.toLowerCase())) throw new ImportError(`${at}.customer_id`, `unknown customer ${u.customer_id}`);
      if (u.type === 'CUSTOMER' && u.merchant_id) throw new ImportError(`${at}.merchant_id`, 'a CUSTOMER user has no merchant_id');
      if (u.type === 'MERCHANT') {
        if (!u.merchant_id) throw new ImportError(`${at}.merchant_id`, 'a MERCHANT user needs merchant_id');
        const owner = merchantOwner.get(u.merchant_id.toLowerCase());
        if (!owner) throw new ImportError(`${at}.merchant_id`, `unknown merchant ${u.merchant_id}`);
        if (owner !== u.customer_id.toLowerCase()) throw new ImportError(`${at}.merchant_id`, `merchant ${u.merchant_id} does not belong to customer ${u.customer_id}`);
        if (u.password) throw new ImportError(`${at}.password`, 'merchant users act through API keys only and have no password');
      }
    });
    (doc.assignments ?? []).forEach((a, i) => {
      const owner = merchantOwner.get(a.merchant_id.toLowerCase());
      if (!owner) throw new ImportError(`$.assignments[${i}].merchant_id`, `unknown merchant ${a.merchant_id}`);
      const seenKinds = new Set<string>();
      a.payment_plan_ids.forEach((id, j) => {
        const at = `$.assignments[${i}].payment_plan_ids[${j}]`;
        const p = plan.get(id.toLowerCase());
        const planCustomer = planOwner.get(id.toLowerCase());
        if (!p || (planCustomer !== null && planCustomer !== owner)) throw new ImportError(at, `unknown payment plan ${id} for this merchant's customer`);
        const kind = [p.card_brand, p.payment_method, p.is_international, p.has_installments, p.term].join('|');
        if (seenKinds.has(kind)) throw new ImportError(at, 'conflicts with another plan of the same kind and term');
        seenKinds.add(kind);
      });
    });
    return new Set((doc.assignments ?? []).map((a) => merchantOwner.get(a.merchant_id.toLowerCase())!));
  }

  return {
    async importDocument(raw: unknown, context: ChangeContext = OPERATOR_CONTEXT): Promise<ImportSummary> {
      const doc = parse(raw);
      const assignedCustomers = await checkReferences(doc);
      // Hash before the transaction: slow work must not hold locks.
      const userRows = await Promise.all(
        (doc.users ?? []).map(async (u) => ({
          email: u.email.trim().toLowerCase(),
          type: u.type,
          customerId: u.customer_id,
          merchantId: u.merchant_id ?? null,
          passwordHash: u.password ? await hasher.hash(u.password) : null,
        })),
      );
      const summary: ImportSummary = {
        customers: doc.customers?.length ?? 0,
        merchants: doc.merchants?.length ?? 0,
        users: userRows.length,
        payment_plans: doc.payment_plans?.length ?? 0,
        assignments: 0,
      };
      await db.transaction(async (tx) => {
        if (doc.customers?.length) {
          await tx.insert(customers).values(doc.customers).onConflictDoUpdate({ target: customers.id, set: { name: sql`excluded.name` } });
        }
        if (doc.merchants?.length) {
          await tx
            .insert(merchants)
            .values(doc.merchants.map((m) => ({ id: m.id, customerId: m.customer_id, name: m.name })))
            .onConflictDoUpdate({ target: merchants.id, set: { name: sql`excluded.name` } });
        }
        if (userRows.length) {
          await tx
            .insert(users)
            .values(userRows)
            .onConflictDoUpdate({
              target: users.email,
              set: {
                type: sql`excluded.type`,
                customerId: sql`excluded.customer_id`,
                merchantId: sql`excluded.merchant_id`,
                passwordHash: sql`coalesce(excluded.password_hash, ${users.passwordHash})`,
              },
            });
        }
        if (doc.payment_plans?.length) {
          await tx
            .insert(paymentPlans)
            .values(
              doc.payment_plans.map((p) => ({
                id: p.id,
                customerId: p.customer_id ?? null,
                paymentMethod: p.payment_method,
                cardBrand: p.card_brand,
                term: p.term,
                commission: String(p.commission),
                hasInstallments: p.has_installments,
                isInternational: p.is_international,
              })),
            )
            .onConflictDoUpdate({
              target: paymentPlans.id,
              set: {
                customerId: sql`excluded.customer_id`,
                paymentMethod: sql`excluded.payment_method`,
                cardBrand: sql`excluded.card_brand`,
                term: sql`excluded.term`,
                commission: sql`excluded.commission`,
                hasInstallments: sql`excluded.has_installments`,
                isInternational: sql`excluded.is_international`,
              },
            });
        }
        // Assignments of these customers run one after another, as through the API.
        if (assignedCustomers.size) await feeRulesDal.lockCustomersAssignments([...assignedCustomers], tx);
        // One set-based replacement per distinct plan list (not per merchant).
        const byPlanSet = new Map<string, { customerId: string; merchantIds: string[]; planIds: string[] }>();
        for (const a of doc.assignments ?? []) {
          const planIds = [...new Set(a.payment_plan_ids.map((id) => id.toLowerCase()))].sort();
          const key = planIds.join(',');
          const group = byPlanSet.get(key) ?? { customerId: '', merchantIds: [], planIds };
          group.merchantIds.push(a.merchant_id.toLowerCase());
          byPlanSet.set(key, group);
        }
        for (const group of byPlanSet.values()) {
          const result = await feeRulesDal.replacePlans({ customerId: group.customerId, merchantIds: group.merchantIds }, group.planIds, tx);
          summary.assignments += result.added;
        }
        await recordAudit(tx, context, {
          action: 'operator.import',
          customerId: null,
          targetType: 'import',
          targetId: null,
          details: { ...summary },
        });
      });
      return summary;
    },
  };
}

export type ImportService = ReturnType<typeof createImportService>;
