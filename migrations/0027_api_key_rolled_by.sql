-- Who rolled a key, on the key the roll made (a login user or an API key): the roller is
-- handed its secret, so four-eyes approval counts them among those who answer for what the
-- key asks (src/features/change-requests/change-requests-dal.ts); null for keys not made by a roll.
ALTER TABLE "api_keys" ADD COLUMN "rolled_by_type" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rolled_by_id" uuid;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_rolled_by_type" CHECK ("rolled_by_type" IS NULL OR "rolled_by_type" IN ('user', 'api_key'));--> statement-breakpoint
-- Rolls made before this column: the audit trail names each roller, in the roll's own record.
UPDATE "api_keys" k SET "rolled_by_type" = a."actor_type", "rolled_by_id" = a."actor_id"::uuid
FROM "audit_events" a
WHERE a."action" = 'api_key.rolled' AND a."actor_type" IN ('user', 'api_key')
  AND a."details"->>'new_key_id' = k."id"::text AND k."rolled_by_type" IS NULL;
