-- Merchants onboarded through the API (docs/api.md#merchants): the platform's
-- fields, a status, and a code unique within each customer. Merchants made
-- before keep their name and answer null for every new field; they are ACTIVE.
CREATE TYPE "merchant_status" AS ENUM('ACTIVE', 'INACTIVE');--> statement-breakpoint
CREATE TYPE "merchant_legal_type" AS ENUM('NATURAL_PERSON', 'LEGAL_ENTITY');--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "status" "merchant_status" DEFAULT 'ACTIVE' NOT NULL;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "business_name" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "fantasy_name" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "legal_type" "merchant_legal_type";--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "country" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "merchant_code" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "email" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "address" jsonb;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "tax_identification_type" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "tax_identification_number" text;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "representative" jsonb;--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "additional_info" text;--> statement-breakpoint
-- An old merchant was last changed when it was made.
ALTER TABLE "merchants" ADD COLUMN "updated_at" timestamp (3) with time zone;--> statement-breakpoint
UPDATE "merchants" SET "updated_at" = "created_at";--> statement-breakpoint
ALTER TABLE "merchants" ALTER COLUMN "updated_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "merchants" ALTER COLUMN "updated_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_country_known" CHECK ("country" IN ('ARG', 'MEX'));--> statement-breakpoint
-- The identifier's type fits the country: CUIT in Argentina, RFC in Mexico.
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_tax_identification_fits_country" CHECK (
  ("tax_identification_type" IS NULL) = ("tax_identification_number" IS NULL)
  AND ("tax_identification_type" IS NULL OR ("country", "tax_identification_type") IN (('ARG', 'CUIT'), ('MEX', 'RFC')))
);--> statement-breakpoint
-- Two concurrent creates with one code: the index lets exactly one commit.
CREATE UNIQUE INDEX "merchants_customer_code_unique" ON "merchants" USING btree ("customer_id","merchant_code") WHERE "merchant_code" IS NOT NULL;
