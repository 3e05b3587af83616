-- Restricted keys (contract section 22): what a key may do and where from.
-- Existing keys get what their access gave them until now: every permission
-- for full, every :read for read_only; no allowed_ips (any address).
ALTER TABLE "api_keys" ADD COLUMN "permissions" text[];--> statement-breakpoint
UPDATE "api_keys" SET "permissions" = CASE "access"
	WHEN 'full' THEN ARRAY['api_keys:read','api_keys:write','merchants:read','merchants:write','fee_rules:read','fee_rules:write','webhooks:read','webhooks:write','users:read','audit:read']
	ELSE ARRAY['api_keys:read','merchants:read','fee_rules:read','webhooks:read','users:read','audit:read'] END;--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "permissions" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "allowed_ips" text[] DEFAULT '{}' NOT NULL;
