-- The platform's v1 merchant fields (contract section 20) that v2's do not
-- already hold: null for merchants made before. tax.id is tax_identification,
-- tax.type is financial_info.tax_condition, representative_id is the
-- representative's identification, and address.location lives in address.
ALTER TABLE "merchants" ADD COLUMN "phone" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "activity" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "category" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "settlement_condition" jsonb;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "financial_info" jsonb;
