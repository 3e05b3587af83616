-- Reset-code guesses and reset mails of a user within the last hour, shared by
-- every instance (contract section 19): the instants of each, pruned as they
-- age, so the limits are a sliding hour and a new code never restarts them.
CREATE TABLE "password_reset_limits" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"wrong_codes" timestamp with time zone[] DEFAULT '{}' NOT NULL,
	"mails" timestamp with time zone[] DEFAULT '{}' NOT NULL
);
--> statement-breakpoint
ALTER TABLE "password_reset_limits" ADD CONSTRAINT "password_reset_limits_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Who created a key: a login user, an API key or the operator; null for keys made before this column.
ALTER TABLE "api_keys" ADD COLUMN "created_by_type" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "created_by_id" uuid;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "created_by_email" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_created_by_type" CHECK ("created_by_type" IS NULL OR "created_by_type" IN ('user', 'api_key', 'operator'));--> statement-breakpoint
CREATE INDEX "api_keys_created_by_idx" ON "api_keys" USING btree ("created_by_id") WHERE "created_by_id" IS NOT NULL;
