-- Four-eyes approval of fee changes (contract section 23): a customer's policy,
-- NONE (every fee change applies at once, as before) or REQUIRED (each becomes a
-- change request that another ADMIN approves).
ALTER TABLE "customers" ADD COLUMN "fee_change_approval" text DEFAULT 'NONE' NOT NULL;
--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_fee_change_approval" CHECK ("customers"."fee_change_approval" IN ('NONE', 'REQUIRED'));
--> statement-breakpoint
-- A fee change held for approval: the request as sent, its dry run when it was
-- made, who asked and who decided. Applied in the approval's own transaction.
CREATE TABLE "change_requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" uuid NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL,
	"operation" text NOT NULL,
	"subject_id" text,
	"request" jsonb NOT NULL,
	"preview" jsonb NOT NULL,
	"requested_by" jsonb NOT NULL,
	"reviewed_by" jsonb,
	"reason" text,
	"result" jsonb,
	"request_id" text,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"decided_at" timestamp (3) with time zone,
	"applied_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "change_requests_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action,
	CONSTRAINT "change_requests_status" CHECK ("status" IN ('PENDING', 'APPLIED', 'REJECTED', 'CANCELLED', 'EXPIRED', 'FAILED'))
);
--> statement-breakpoint
-- GET /v1/change-requests: a customer's requests newest first, all or of one status.
CREATE INDEX "change_requests_customer_idx" ON "change_requests" USING btree ("customer_id", "created_at" DESC NULLS FIRST, "id" DESC NULLS FIRST);
--> statement-breakpoint
-- The expiry sweep: pending requests by the instant they expire.
CREATE INDEX "change_requests_expiry_idx" ON "change_requests" USING btree ("expires_at", "id") WHERE "status" = 'PENDING';
