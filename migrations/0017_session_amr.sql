-- How each login was established (RFC 8176 values), carried by its access
-- tokens as `amr`: a login made before this column existed was made with the
-- password alone, so the default is also the value of every existing row.
ALTER TABLE "auth_sessions" ADD COLUMN "amr" text[] DEFAULT '{pwd}' NOT NULL;
