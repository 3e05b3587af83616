-- The fee-rule catalogue (docs/api.md, "The fee-rule catalogue"): a plan is
-- ACTIVE or RETIRED. A retired plan is no longer offered or assignable, but the
-- merchants that hold it keep it: retiring never touches merchant_payment_plans.
-- Every existing plan stays ACTIVE.
ALTER TABLE "payment_plans" ADD COLUMN "status" text DEFAULT 'ACTIVE' NOT NULL;
--> statement-breakpoint
ALTER TABLE "payment_plans" ADD COLUMN "retired_at" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "payment_plans" ADD CONSTRAINT "payment_plans_status" CHECK ("payment_plans"."status" IN ('ACTIVE', 'RETIRED'));
--> statement-breakpoint
-- Changes of a customer's fee rules scheduled for a future instant, applied by
-- whichever instance claims them first (FOR UPDATE SKIP LOCKED). The actor and
-- request id of whoever scheduled it are kept so that the change, once applied,
-- is attributed to them.
CREATE TABLE "scheduled_fee_rule_changes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" uuid NOT NULL REFERENCES "customers"("id"),
	"kind" text NOT NULL,
	"merchant_ids" uuid[],
	"payment_plan_ids" uuid[] NOT NULL,
	"effective_at" timestamp (3) with time zone NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"actor" jsonb NOT NULL,
	"request_id" text,
	"outcome" jsonb,
	"applied_at" timestamp (3) with time zone,
	"cancelled_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "scheduled_fee_rule_changes_kind" CHECK ("kind" IN ('BULK', 'ALL') AND ("kind" = 'ALL') = ("merchant_ids" IS NULL)),
	CONSTRAINT "scheduled_fee_rule_changes_status" CHECK ("status" IN ('PENDING', 'APPLIED', 'CANCELLED'))
);
--> statement-breakpoint
-- What falls due: the pending changes by instant (claimed by every instance each second).
CREATE INDEX "scheduled_fee_rule_changes_due_idx" ON "scheduled_fee_rule_changes" USING btree ("effective_at", "id") WHERE "status" = 'PENDING';
--> statement-breakpoint
-- GET /v1/fee-rules/scheduled-changes: a customer's changes newest first.
CREATE INDEX "scheduled_fee_rule_changes_customer_idx" ON "scheduled_fee_rule_changes" USING btree ("customer_id", "created_at" DESC NULLS FIRST, "id" DESC NULLS FIRST);
--> statement-breakpoint
-- A scheduled change takes effect at its instant, not when an instance got to
-- apply it: its transaction sets feegate.change_at, and what it replaces ends
-- then, so that the history has neither a gap nor an overlap.
CREATE OR REPLACE FUNCTION "merchant_payment_plans_keep_removed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ended timestamptz := coalesce(nullif(current_setting('feegate.change_at', true), '')::timestamptz, statement_timestamp());
BEGIN
  INSERT INTO "merchant_payment_plan_history" ("merchant_id", "payment_plan_id", "assigned_at", "removed_at")
  SELECT "merchant_id", "payment_plan_id", "assigned_at", greatest(ended, "assigned_at") FROM old_rows;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Every instance keeps merchants' fee-rule timelines in memory (GET
-- /v1/merchants/{id}/fee-rules?at=); whatever changes assignments or plans (the
-- API, a scheduled change, the import, an operator by hand) tells them on commit.
-- One notice per statement, and PostgreSQL folds repeats within a transaction.
CREATE FUNCTION "notify_fee_rules_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('feegate_fee_rules_changed', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "merchant_payment_plans_notify" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "merchant_payment_plans"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_fee_rules_changed"();
--> statement-breakpoint
CREATE TRIGGER "merchant_payment_plan_history_notify" AFTER UPDATE OR DELETE OR TRUNCATE ON "merchant_payment_plan_history"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_fee_rules_changed"();
--> statement-breakpoint
CREATE TRIGGER "payment_plans_notify" AFTER UPDATE OR DELETE OR TRUNCATE ON "payment_plans"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_fee_rules_changed"();
