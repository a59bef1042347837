-- Every key and unique index of a tenant table includes organization_id (the distribution column on a
-- Citus cluster); ids stay unique through their sequences. The unused login_failures table goes.
DROP TABLE "login_failures" CASCADE;--> statement-breakpoint
DROP INDEX "donations_id_key";--> statement-breakpoint
DROP INDEX "supporters_id_key";--> statement-breakpoint
DROP INDEX "donor_links_token_hash_key";--> statement-breakpoint
DROP INDEX "donor_sessions_token_hash_key";--> statement-breakpoint
DROP INDEX "refunds_idempotency_key_idx";--> statement-breakpoint
CREATE INDEX "donations_id_idx" ON "donations" USING btree ("id");--> statement-breakpoint
CREATE INDEX "supporters_id_idx" ON "supporters" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "donor_links_token_hash_key" ON "donor_links" USING btree ("organization_id","token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "donor_sessions_token_hash_key" ON "donor_sessions" USING btree ("organization_id","token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "refunds_idempotency_key_idx" ON "refunds" USING btree ("organization_id","idempotency_key");--> statement-breakpoint
-- Collection totals are kept by the inserting repositories (src/db/collection-counts.ts): a statement
-- trigger with transition tables cannot run on a Citus shard. The totals they kept stay as they are.
DROP TRIGGER "campaigns_count_insert" ON "campaigns";--> statement-breakpoint
DROP TRIGGER "campaigns_count_delete" ON "campaigns";--> statement-breakpoint
DROP TRIGGER "supporters_count_insert" ON "supporters";--> statement-breakpoint
DROP TRIGGER "supporters_count_delete" ON "supporters";--> statement-breakpoint
DROP TRIGGER "donations_count_insert" ON "donations";--> statement-breakpoint
DROP TRIGGER "donations_count_delete" ON "donations";--> statement-breakpoint
DROP TRIGGER "payments_count_insert" ON "payments";--> statement-breakpoint
DROP TRIGGER "payments_count_delete" ON "payments";--> statement-breakpoint
DROP TRIGGER "checkouts_count_insert" ON "checkouts";--> statement-breakpoint
DROP TRIGGER "checkouts_count_delete" ON "checkouts";--> statement-breakpoint
DROP TRIGGER "payment_methods_count_insert" ON "payment_methods";--> statement-breakpoint
DROP TRIGGER "payment_methods_count_delete" ON "payment_methods";--> statement-breakpoint
DROP FUNCTION "donata_count_rows"();
--> statement-breakpoint
-- A table created by a later migration takes its place on a Citus cluster in that migration, right
-- after its CREATE TABLE and before its foreign keys: SELECT donata_place('name', 'distributed')
-- (or 'reference', or 'coordinator'). Without Citus it does nothing. See docs/scaling.md.
CREATE FUNCTION donata_place(target regclass, placement text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF placement NOT IN ('distributed', 'reference', 'coordinator') THEN
    RAISE EXCEPTION 'donata_place: unknown placement %', placement;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  IF placement = 'distributed' THEN
    EXECUTE 'SELECT create_distributed_table($1, ''organization_id'', colocate_with => ''campaigns'')' USING target;
  ELSIF placement = 'reference' THEN
    EXECUTE 'SELECT create_reference_table($1)' USING target;
  END IF;
END
$$;
