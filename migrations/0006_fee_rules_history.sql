-- Fee rules over time (contract section 10). merchant_payment_plans stays the
-- present; merchant_payment_plan_history holds every assignment that ended, as
-- the closed interval [assigned_at, removed_at). A past instant T is the union of
-- present rows assigned by T and history rows with assigned_at <= T < removed_at.
-- Only removals write history, so an assignment costs nothing more to keep.
--
-- assigned_at (and removed_at) take the time of the statement, not of the
-- transaction: assignments of one customer run one after another under its lock,
-- and a statement starts after that lock is granted, so the intervals of
-- successive changes never overlap. now() would be the time of BEGIN, before the
-- lock, and could fall before the change the previous holder of the lock made.
ALTER TABLE "merchant_payment_plans" ALTER COLUMN "assigned_at" SET DEFAULT statement_timestamp();
--> statement-breakpoint
CREATE TABLE "merchant_payment_plan_history" (
	"merchant_id" uuid NOT NULL,
	"payment_plan_id" uuid NOT NULL,
	"assigned_at" timestamp (3) with time zone NOT NULL,
	"removed_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "merchant_payment_plan_history_interval" CHECK ("merchant_payment_plan_history"."removed_at" >= "merchant_payment_plan_history"."assigned_at")
);
--> statement-breakpoint
-- A merchant's intervals from the most recent end: for a recent instant the scan
-- stops after a few entries; every column the query needs is in the key, so
-- it is an index-only scan once vacuum has set the visibility map.
CREATE INDEX "merchant_payment_plan_history_at_idx" ON "merchant_payment_plan_history" USING btree ("merchant_id","removed_at","assigned_at","payment_plan_id");
--> statement-breakpoint
-- Whatever deletes assignments (the replacement rule, an operator by hand) keeps
-- them: one set-based INSERT per statement from its transition table.
CREATE FUNCTION "merchant_payment_plans_keep_removed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "merchant_payment_plan_history" ("merchant_id", "payment_plan_id", "assigned_at", "removed_at")
  SELECT "merchant_id", "payment_plan_id", "assigned_at", greatest(statement_timestamp(), "assigned_at") FROM old_rows;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "merchant_payment_plans_history_on_delete" AFTER DELETE ON "merchant_payment_plans"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "merchant_payment_plans_keep_removed"();
--> statement-breakpoint
-- An assignment is replaced (delete, then insert), never updated in place: an
-- update would rewrite the past. Named to fire after the parents check, so an
-- update to a missing parent still reports a foreign key violation.
CREATE FUNCTION "merchant_payment_plans_refuse_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'merchant_payment_plans: assignments are deleted and inserted, never updated (history would be lost)'
    USING ERRCODE = 'restrict_violation';
END $$;
--> statement-breakpoint
CREATE TRIGGER "merchant_payment_plans_updates_refused" AFTER UPDATE ON "merchant_payment_plans"
  FOR EACH STATEMENT EXECUTE FUNCTION "merchant_payment_plans_refuse_update"();
--> statement-breakpoint
-- A merchant or plan that is assigned, or ever was, can neither be deleted nor
-- change id: the history must keep naming what it names.
CREATE OR REPLACE FUNCTION "restrict_assigned_parent"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  assigned_column text := TG_ARGV[0];
  gone text := CASE WHEN TG_OP = 'DELETE' THEN 'SELECT "id" FROM old_rows'
                    ELSE 'SELECT "id" FROM old_rows EXCEPT SELECT "id" FROM new_rows' END;
  still_assigned boolean;
BEGIN
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM (%s) o JOIN "merchant_payment_plans" a ON a.%I = o."id")
                  OR EXISTS (SELECT 1 FROM (%s) o JOIN "merchant_payment_plan_history" h ON h.%I = o."id")',
                 gone, assigned_column, gone, assigned_column)
    INTO still_assigned;
  IF still_assigned THEN
    RAISE EXCEPTION '%: a row still referenced by merchant_payment_plans or its history', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- GET /v1/audit-events reads a customer's events newest first, optionally of one action.
DROP INDEX "audit_events_customer_idx";
--> statement-breakpoint
CREATE INDEX "audit_events_customer_listing_idx" ON "audit_events" USING btree ("customer_id","occurred_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);
--> statement-breakpoint
CREATE INDEX "audit_events_customer_action_idx" ON "audit_events" USING btree ("customer_id","action","occurred_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);
