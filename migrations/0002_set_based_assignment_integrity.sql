ALTER TABLE "merchant_payment_plans" DROP CONSTRAINT "merchant_payment_plans_merchant_id_merchants_id_fk";
--> statement-breakpoint
ALTER TABLE "merchant_payment_plans" DROP CONSTRAINT "merchant_payment_plans_payment_plan_id_payment_plans_id_fk";
--> statement-breakpoint
DROP INDEX "merchant_payment_plans_plan_idx";
--> statement-breakpoint
-- Parents of newly assigned rows must exist; lock them like a foreign key does
-- (KEY SHARE), but once per statement for the distinct parents, not per row.
CREATE FUNCTION "merchant_payment_plans_check_parents"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "merchants" m WHERE m."id" IN (SELECT DISTINCT "merchant_id" FROM new_rows) FOR KEY SHARE OF m;
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT "merchant_id" FROM new_rows) n
             WHERE NOT EXISTS (SELECT 1 FROM "merchants" m WHERE m."id" = n."merchant_id")) THEN
    RAISE EXCEPTION 'merchant_payment_plans: a merchant that does not exist' USING ERRCODE = 'foreign_key_violation';
  END IF;
  PERFORM 1 FROM "payment_plans" p WHERE p."id" IN (SELECT DISTINCT "payment_plan_id" FROM new_rows) FOR KEY SHARE OF p;
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT "payment_plan_id" FROM new_rows) n
             WHERE NOT EXISTS (SELECT 1 FROM "payment_plans" p WHERE p."id" = n."payment_plan_id")) THEN
    RAISE EXCEPTION 'merchant_payment_plans: a payment plan that does not exist' USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "merchant_payment_plans_parents_on_insert" AFTER INSERT ON "merchant_payment_plans"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "merchant_payment_plans_check_parents"();
--> statement-breakpoint
CREATE TRIGGER "merchant_payment_plans_parents_on_update" AFTER UPDATE ON "merchant_payment_plans"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "merchant_payment_plans_check_parents"();
--> statement-breakpoint
-- A merchant or plan that is still assigned can neither be deleted nor change id (ON DELETE RESTRICT).
CREATE FUNCTION "restrict_assigned_parent"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  assigned_column text := TG_ARGV[0];
  still_assigned boolean;
BEGIN
  IF TG_OP = 'DELETE' THEN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM old_rows o JOIN "merchant_payment_plans" a ON a.%I = o."id")', assigned_column)
      INTO still_assigned;
  ELSE
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM (SELECT "id" FROM old_rows EXCEPT SELECT "id" FROM new_rows) o
                    JOIN "merchant_payment_plans" a ON a.%I = o."id")', assigned_column)
      INTO still_assigned;
  END IF;
  IF still_assigned THEN
    RAISE EXCEPTION '%: a row still referenced by merchant_payment_plans', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "merchants_restrict_assigned_on_delete" AFTER DELETE ON "merchants"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "restrict_assigned_parent"('merchant_id');
--> statement-breakpoint
CREATE TRIGGER "merchants_restrict_assigned_on_update" AFTER UPDATE ON "merchants"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "restrict_assigned_parent"('merchant_id');
--> statement-breakpoint
CREATE TRIGGER "payment_plans_restrict_assigned_on_delete" AFTER DELETE ON "payment_plans"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "restrict_assigned_parent"('payment_plan_id');
--> statement-breakpoint
CREATE TRIGGER "payment_plans_restrict_assigned_on_update" AFTER UPDATE ON "payment_plans"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "restrict_assigned_parent"('payment_plan_id');
