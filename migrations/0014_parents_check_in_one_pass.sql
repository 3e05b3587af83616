-- The parents check of migration 0002, cheaper for large statements: the
-- distinct merchants and plans of the new rows come from one pass over the
-- transition table (it read it four times), and each parent is locked and
-- counted in the same query (found fewer than named: one does not exist). The
-- same rows are locked (KEY SHARE, merchants first) and the same errors raised.
CREATE OR REPLACE FUNCTION "merchant_payment_plans_check_parents"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing text;
BEGIN
  WITH keys AS MATERIALIZED (
    SELECT "merchant_id", "payment_plan_id" FROM new_rows
    GROUP BY GROUPING SETS (("merchant_id"), ("payment_plan_id"))
  ),
  merchants_found AS (
    SELECT m."id" FROM "merchants" m WHERE m."id" IN (SELECT "merchant_id" FROM keys) FOR KEY SHARE OF m
  ),
  plans_found AS (
    SELECT p."id" FROM "payment_plans" p WHERE p."id" IN (SELECT "payment_plan_id" FROM keys) FOR KEY SHARE OF p
  )
  SELECT CASE
    WHEN (SELECT count(*) FROM merchants_found) <> (SELECT count("merchant_id") FROM keys) THEN 'a merchant'
    WHEN (SELECT count(*) FROM plans_found) <> (SELECT count("payment_plan_id") FROM keys) THEN 'a payment plan'
  END INTO missing;
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'merchant_payment_plans: % that does not exist', missing USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END $$;
