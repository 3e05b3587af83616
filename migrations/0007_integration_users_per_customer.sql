-- Each customer has its own integration users (contract sections 4 and 12).
-- Numbered 0007, not 0003: drizzle's migrator applies only entries whose `when`
-- is later than the last one a database recorded, so an entry slotted in
-- before 0004-0006 would never run on a database that already has them.
--
-- A login user (with a password) logs in by e-mail: its e-mail stays unique on
-- the platform. An integration user (no password) only holds API keys: its
-- e-mail is unique within its customer, so two customers may use one address,
-- and a customer may use its login user's address for keys too.
ALTER TABLE "users" DROP CONSTRAINT "users_email_unique";
--> statement-breakpoint
CREATE UNIQUE INDEX "users_login_email_unique" ON "users" USING btree ("email") WHERE "users"."password_hash" IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX "users_integration_email_unique" ON "users" USING btree ("customer_id","email") WHERE "users"."password_hash" IS NULL;
--> statement-breakpoint
-- Keys go to integration users only. Keys that were issued to a login user's
-- e-mail move to a new integration user of the same e-mail and customer: they
-- keep working, and the login (its password, sessions and tokens) stays as it was.
INSERT INTO "users" ("email", "type", "customer_id", "merchant_id")
SELECT u."email", u."type", u."customer_id", u."merchant_id" FROM "users" u
WHERE u."password_hash" IS NOT NULL AND EXISTS (SELECT 1 FROM "api_keys" k WHERE k."user_id" = u."id");
--> statement-breakpoint
UPDATE "api_keys" k SET "user_id" = i."id"
FROM "users" l, "users" i
WHERE k."user_id" = l."id" AND l."password_hash" IS NOT NULL
  AND i."password_hash" IS NULL AND i."customer_id" = l."customer_id" AND i."email" = l."email";
