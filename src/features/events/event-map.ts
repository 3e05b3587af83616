/**
 * The one map of domain events: each type and the schema of its `data`. It types
 * `emit` (the unit of work's EventPayloads, below), documents each event in the
 * OpenAPI document's `webhooks` section (src/features/webhooks/webhooks-docs.ts),
 * and through the generated client gives the console its list of events. A new
 * type is one entry here; the rest follows. The payloads are the resources as
 * the API answers them, so most entries are the feature's own response schema.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from '../../schemas/common.js';
import { CreatedApiKey, ListedApiKey } from '../api-keys/api-keys-schemas.js';
import { AuditEvent } from '../audit/audit-schemas.js';
import { FeeRule } from '../fee-plans/fee-rule-catalogue-schemas.js';
import { DryRun } from '../fee-plans/fee-rules-schemas.js';
import { ScheduledChange } from '../fee-plans/scheduled-changes-schemas.js';
import { Merchant } from '../merchants/merchant-answer-schemas.js';
import { User } from '../users/users-schemas.js';

const { dry_run: _dryRun, ...effect } = DryRun.properties;

/** A new key as events carry it: the created key's record, the key masked as listings show it. */
const NewKey = Type.Object({
  ...CreatedApiKey.properties,
  api_key: Type.String({ description: 'Masked: the prefix and the last 4 characters only' }),
});

/** Each event type and the schema of its `data`, in the order the document lists them. */
export const EVENT_MAP = {
  API_KEY_CREATED: { data: NewKey, about: 'The new key as POST /v1/api-keys answers it, the key masked.' },
  API_KEY_UPDATED: { data: ListedApiKey, about: 'The key after the change, as listed.' },
  API_KEY_ROLLED: {
    data: Type.Object({
      ...NewKey.properties,
      rolled_from: { ...Uuid, description: 'The key it replaces' },
      rolled_from_expires_at: { ...Timestamp, description: 'When the old key stops working (its grace period)' },
    }),
    about: 'The new key of the roll (masked); the old one keeps working for its grace period.',
  },
  API_KEY_REVOKED: { data: ListedApiKey, about: 'The deleted key, as listed (status DELETED).' },
  API_KEY_EXPIRING: {
    data: ListedApiKey,
    about: 'The key, as listed, 7 days before its expires_at (once per expiry; again if it is moved).',
  },
  FEE_RULES_ASSIGNED: {
    data: Type.Object({
      merchant_ids: Nullable(Type.Array(Uuid), 'The merchants named; null for /all'),
      payment_plan_ids: Type.Array(Uuid),
      ...effect,
    }),
    about: 'What an assignment changed, in the shape of a dry run: counts and the first changed merchants.',
  },
  FEE_RULES_SCHEDULED: { data: ScheduledChange, about: 'The scheduled change, as the API answers it.' },
  FEE_RULES_SCHEDULE_APPLIED: {
    data: Type.Object({ ...ScheduledChange.properties, changes: effect.changes }),
    about: 'The scheduled change once applied, as the API answers it, with the first changed merchants.',
  },
  PAYMENT_PLAN_CREATED: { data: FeeRule, about: 'The new payment plan, as GET /v1/fee-rules lists it.' },
  PAYMENT_PLAN_RETIRED: { data: FeeRule, about: 'The retired payment plan, as GET /v1/fee-rules lists it.' },
  MERCHANT_CREATED: { data: Merchant, about: 'The new merchant, as the API answers it.' },
  MERCHANT_UPDATED: { data: Merchant, about: 'The merchant after the change, as the API answers it.' },
  USER_CREATED: { data: User, about: 'The new user, as listed (never a password).' },
  USER_UPDATED: { data: User, about: 'The user after the change, as listed.' },
  AUDIT_RECORD: {
    data: AuditEvent,
    about:
      "A record of the customer's audit trail as GET /v1/audit-events lists it, sent as it is written (for a SIEM). Opt-in: sent only to subscriptions that list AUDIT_RECORD, and written only while one does.",
  },
  WEBHOOK_TEST: {
    data: Type.Object({
      webhook_id: { ...Uuid, description: 'The subscription it is sent to' },
      message: Type.String(),
    }),
    about:
      'webhook_id (the subscription) and message: sent by POST /v1/webhooks/{id}/test and the mock payment notification.',
  },
} satisfies Record<string, { data: TSchema; about: string }>;

export type EventType = keyof typeof EVENT_MAP;
/** The event types, upper case as the platform writes them. */
export const EVENT_TYPES = Object.keys(EVENT_MAP) as EventType[];

/** What `data` holds for each type: the type of its schema. */
export type EventPayloadMap = { [T in EventType]: Static<(typeof EVENT_MAP)[T]['data']> };

// db/ knows no feature, so the unit of work declares an empty EventPayloads and the map fills it in here.
declare module '../../db/unit-of-work.js' {
  interface EventPayloads extends EventPayloadMap {}
}
