CREATE TABLE "webhook_subscriptions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"customer_id" uuid NOT NULL REFERENCES "customers"("id"),
	"notification_url" text NOT NULL,
	"notification_types" text[] NOT NULL,
	"status" text DEFAULT 'ENABLED' NOT NULL CONSTRAINT "webhook_subscriptions_status_check" CHECK ("status" IN ('ENABLED', 'DISABLED')),
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" timestamp (3) with time zone,
	"failing_since" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_subscriptions_customer_listing_idx" ON "webhook_subscriptions" USING btree ("customer_id", "created_at" DESC, "id" DESC);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"subscription_id" uuid NOT NULL REFERENCES "webhook_subscriptions"("id") ON DELETE CASCADE,
	"event_id" uuid NOT NULL REFERENCES "domain_events"("id"),
	"event_type" text NOT NULL,
	"status" text DEFAULT 'PENDING' NOT NULL CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" IN ('PENDING', 'SUCCEEDED', 'FAILED')),
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"claimed_until" timestamp (3) with time zone,
	"last_attempt_at" timestamp (3) with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_subscription_event_unique" UNIQUE ("subscription_id", "event_id")
);
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_listing_idx" ON "webhook_deliveries" USING btree ("subscription_id", "created_at" DESC, "id" DESC);
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "status" = 'PENDING';
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_id");
--> statement-breakpoint
ALTER TABLE "domain_events" ADD COLUMN "fanned_out_at" timestamp (3) with time zone;
--> statement-breakpoint
UPDATE "domain_events" SET "fanned_out_at" = "created_at";
--> statement-breakpoint
CREATE INDEX "domain_events_pending_fan_out_idx" ON "domain_events" USING btree ("created_at") WHERE "fanned_out_at" IS NULL;
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expiry_warned_for" timestamp (3) with time zone;
--> statement-breakpoint
CREATE INDEX "api_keys_expiry_idx" ON "api_keys" USING btree ("expires_at") WHERE "status" = 'ENABLED' AND "expires_at" IS NOT NULL AND "replaced_by" IS NULL;
--> statement-breakpoint
CREATE FUNCTION "feegate_domain_events_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('feegate_webhooks', '');
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "domain_events_wake_webhooks" AFTER INSERT ON "domain_events" FOR EACH STATEMENT EXECUTE FUNCTION "feegate_domain_events_notify"();
