-- A rolled key's successor continues its predecessor's rate-limit count: every
-- key of a roll chain counts under the chain's first key (null: the key is first).
ALTER TABLE "api_keys" ADD COLUMN "roll_chain_id" uuid;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_roll_chain_id_fk" FOREIGN KEY ("roll_chain_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Keys rolled before this migration join their chains: each chain is walked from
-- its first key, the one no other key was replaced by.
WITH RECURSIVE chain (id, root) AS (
  SELECT k.replaced_by, k.id FROM api_keys k
  WHERE k.replaced_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM api_keys p WHERE p.replaced_by = k.id)
  UNION ALL
  SELECT k.replaced_by, c.root FROM chain c JOIN api_keys k ON k.id = c.id WHERE k.replaced_by IS NOT NULL
)
UPDATE api_keys SET roll_chain_id = chain.root FROM chain WHERE api_keys.id = chain.id;
