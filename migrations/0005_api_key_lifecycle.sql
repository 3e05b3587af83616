CREATE TYPE "public"."api_key_access" AS ENUM('full', 'read_only');--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "name" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "access" "api_key_access" DEFAULT 'full' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rate_limit" integer;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rate_limit_window_seconds" integer;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "replaced_by" uuid;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_replaced_by_fk" FOREIGN KEY ("replaced_by") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_name_length" CHECK ("api_keys"."name" IS NULL OR char_length("api_keys"."name") BETWEEN 1 AND 64);--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_rate_limit_valid" CHECK (("api_keys"."rate_limit" IS NULL) = ("api_keys"."rate_limit_window_seconds" IS NULL) AND ("api_keys"."rate_limit" IS NULL OR ("api_keys"."rate_limit" BETWEEN 1 AND 100000 AND "api_keys"."rate_limit_window_seconds" BETWEEN 1 AND 86400)));
