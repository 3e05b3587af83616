/**
 * Imports customers, merchants, users, payment plans and assignments from one
 * document, in one transaction, idempotently (upsert by id; login users by
 * e-mail, integration users by customer and e-mail). Anything invalid is
 * reported with its JSON path and nothing is written. Files of any size: the
 * checks (import-checks.ts) are linear in the document, and the writes are
 * batches (import-dal.ts).
 */
import type { WriteScope } from '../../db/unit-of-work.js';
import { type ChangeContext, OPERATOR_CONTEXT } from '../../lib/change-context.js';
import type { AuthDals } from '../auth/auth-dal.js';
import type { AuthService } from '../auth/auth-service.js';
import type { PasswordHasher } from '../credentials/password-hasher.js';
import { assertStrongPassword } from '../credentials/password-policy.js';
import { AppError, ImportError } from '../../errors.js';
import type { CustomerLocks } from '../../db/customer-locks.js';
import type { FeeRulesDal } from '../fee-plans/fee-rules-dal.js';
import type { FeeRulesDals } from '../fee-plans/fee-rules-service.js';
import type { ChangedLoginUser, ImportDal, LoginUserRow, UserRow } from './import-dal.js';
import {
  checkReferences,
  type DocumentCheck,
  type ImportReads,
  merchantRow,
  type Normalised,
  parseDocument,
  refuseUser,
} from './import-checks.js';

export interface ImportSummary {
  customers: number;
  merchants: number;
  users: number;
  payment_plans: number;
  assignments: number;
}

/** The DALs an import writes through, in one unit of work holding its customers' locks. */
export interface ImportDals extends FeeRulesDals, AuthDals {
  import: ImportDal;
}

export function createImportService(deps: {
  dal: ImportReads;
  hasher: PasswordHasher;
  /** A re-import that changes a login user's role or password ends their sessions, as the users API does. */
  sessions: Pick<AuthService, 'revokeSessionsIn'>;
  customerLocks: CustomerLocks<ImportDals>;
  checkDocument: DocumentCheck;
}) {
  const { dal, hasher, sessions, customerLocks, checkDocument } = deps;

  /**
   * The stored hash when the file repeats a known user's password (re-importing
   * a file changes no password and ends no session), else a new one.
   */
  async function passwordHash(password: string, stored: string | undefined, at: string, email: string) {
    if (stored !== undefined && (await hasher.matches(stored, password))) return stored;
    // A password the import sets follows the API's rule (POST /v1/users/me/password).
    await assertStrongPassword(password, email).catch((err: unknown) => {
      throw err instanceof AppError ? new ImportError(at, `is a weak password: ${err.detail}`) : err;
    });
    return hasher.hash(password);
  }

  /** The file's login users with their hashes, made before the transaction: slow work must not hold locks. */
  async function loginUsersOf(doc: Normalised): Promise<LoginUserRow[]> {
    const known = await dal.loginPasswordHashes(doc.users.flatMap((u) => (u.password ? [u.email] : [])));
    const stored = new Map(known.map((u) => [u.email, u.passwordHash]));
    return Promise.all(
      doc.users.flatMap(({ password, role, ...user }, i) =>
        password
          ? [
              passwordHash(password, stored.get(user.email), `$.users[${i}].password`, user.email).then((hash) => ({
                ...user,
                role: role ?? 'ADMIN',
                password_hash: hash,
              })),
            ]
          : [],
      ),
    );
  }

  /** Ends the sessions of the known login users whose role or password the import changed; answers how many. */
  async function endSessionsOf(scope: WriteScope<ImportDals>, changed: ChangedLoginUser[]): Promise<number> {
    let ended = 0;
    for (const user of changed)
      ended += (await sessions.revokeSessionsIn(scope, user.id, user.roleChanged ? 'role_changed' : 'password_reset'))
        .length;
    return ended;
  }

  /** One set-based replacement per distinct plan list (not per merchant): the replacement rule of the API. */
  async function assign(doc: Normalised, feeRules: FeeRulesDal): Promise<number> {
    const byPlanSet = new Map<string, { merchantIds: string[]; planIds: string[] }>();
    for (const a of doc.assignments) {
      const planIds = [...new Set(a.payment_plan_ids)].sort();
      const key = planIds.join(',');
      const group = byPlanSet.get(key) ?? { merchantIds: [], planIds };
      group.merchantIds.push(a.merchant_id);
      byPlanSet.set(key, group);
    }
    let added = 0;
    for (const group of byPlanSet.values()) {
      added += (await feeRules.replacePlans({ customerId: '', merchantIds: group.merchantIds }, group.planIds)).added;
    }
    return added;
  }

  return {
    async importDocument(raw: unknown, context: ChangeContext = OPERATOR_CONTEXT): Promise<ImportSummary> {
      const doc = parseDocument(checkDocument, raw);
      const merchantRows = doc.merchants.map(merchantRow);
      const assignedCustomers = await checkReferences(dal, doc);
      const loginUsers = await loginUsersOf(doc);
      const integrationUsers: UserRow[] = doc.users.flatMap(({ password, role: _role, ...user }) =>
        password ? [] : [user],
      );
      const summary: ImportSummary = {
        customers: doc.customers.length,
        merchants: doc.merchants.length,
        users: doc.users.length,
        payment_plans: doc.payment_plans.length,
        assignments: 0,
      };
      // The locks first: upserting a customer whose assignments are being changed
      // would otherwise wait inside PostgreSQL, and fail at lock_timeout.
      const customerIds = [...new Set([...doc.customers.map((c) => c.id), ...assignedCustomers])];
      await customerLocks.forCustomers(customerIds, context, async (scope) => {
        const { import: writer, feeRules } = scope.dal;
        await writer.upsertCustomers(doc.customers);
        await writer.upsertMerchants(merchantRows);
        const {
          refused: [movedLogin],
          changed,
        } = await writer.upsertLoginUsers(loginUsers);
        if (movedLogin) throw refuseUser(doc, movedLogin, true);
        const sessionsEnded = await endSessionsOf(scope, changed);
        const [changedIntegration] = await writer.upsertIntegrationUsers(integrationUsers);
        if (changedIntegration) throw refuseUser(doc, changedIntegration, false);
        await writer.upsertPaymentPlans(doc.payment_plans);
        summary.assignments = await assign(doc, feeRules);
        await scope.audit({
          action: 'operator.import',
          customerId: null,
          targetType: 'import',
          targetId: null,
          details: { ...summary, sessions_ended: sessionsEnded },
        });
      });
      return summary;
    },
  };
}

export type ImportService = ReturnType<typeof createImportService>;
