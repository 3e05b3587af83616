-- Secrets at rest (docs/production.md, "Keys and secrets"). The private
-- signing keys become text: they are stored encrypted by the key ring (the
-- first start that has a ring encrypts the plain ones this migration keeps).
ALTER TABLE "signing_keys" ALTER COLUMN "private_jwk" TYPE text USING "private_jwk"::text;
--> statement-breakpoint
-- The key of the HMAC kept of reset and recovery codes, itself encrypted by
-- the ring: rotating the ring re-encrypts this one row, and every code stays good.
CREATE TABLE "digest_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
