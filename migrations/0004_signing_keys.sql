-- Keys that sign access tokens (JWT, Ed25519). The newest unretired key signs;
-- a retired one keeps verifying until the tokens it signed have expired.
CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"algorithm" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_jwk" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp (3) with time zone
);
--> statement-breakpoint
-- At most one key signs: instances starting at once race to insert the first
-- key, and the index lets exactly one win.
CREATE UNIQUE INDEX "signing_keys_one_active_idx" ON "signing_keys" USING btree ((true)) WHERE "signing_keys"."retired_at" IS NULL;
--> statement-breakpoint
-- Every instance loads the recently revoked logins at start.
CREATE INDEX "auth_sessions_revoked_idx" ON "auth_sessions" USING btree ("revoked_at") WHERE "auth_sessions"."revoked_at" IS NOT NULL;
