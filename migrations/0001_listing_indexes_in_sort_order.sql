DROP INDEX "api_keys_listing_idx";--> statement-breakpoint
DROP INDEX "merchants_customer_listing_idx";--> statement-breakpoint
CREATE INDEX "api_keys_customer_listing_idx" ON "api_keys" USING btree ("customer_id","status","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "api_keys"."merchant_id" IS NULL;--> statement-breakpoint
CREATE INDEX "api_keys_merchant_listing_idx" ON "api_keys" USING btree ("merchant_id","status","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "api_keys"."merchant_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "merchants_customer_listing_idx" ON "merchants" USING btree ("customer_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);