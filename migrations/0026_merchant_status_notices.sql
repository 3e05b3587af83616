-- Every instance keeps merchants' statuses in memory for fee quotes
-- (src/features/merchants/merchant-statuses.ts); whatever updates or removes
-- merchants (the API, the import, an operator by hand) tells them on commit.
-- One notice per statement, and PostgreSQL folds repeats within a transaction.
CREATE FUNCTION "notify_merchants_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('feegate_merchants_changed', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "merchants_notify" AFTER UPDATE OR DELETE OR TRUNCATE ON "merchants"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_merchants_changed"();
