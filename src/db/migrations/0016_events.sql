-- The one record of every change: events, numbered per organization in commit order (src/events/).
-- donata_place leaves a fresh database alone: there the earlier tables are not laid out yet either,
-- and donata migrate lays them all out after the last migration (src/db/distribution.ts). It places
-- a new table at once when the cluster's tables are already distributed (an upgrade).
CREATE OR REPLACE FUNCTION donata_place(target regclass, placement text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF placement NOT IN ('distributed', 'reference', 'coordinator') THEN
    RAISE EXCEPTION 'donata_place: unknown placement %', placement;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'public.campaigns'::regclass) THEN
    RETURN;
  END IF;
  IF placement = 'distributed' THEN
    EXECUTE 'SELECT create_distributed_table($1, ''organization_id'', colocate_with => ''campaigns'')' USING target;
  ELSIF placement = 'reference' THEN
    EXECUTE 'SELECT create_reference_table($1)' USING target;
  END IF;
END
$$;
--> statement-breakpoint
CREATE TABLE "event_sequences" (
	"organization_id" bigint NOT NULL,
	"last_seq" bigint DEFAULT 0 NOT NULL,
	"pruned_through" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "event_sequences_organization_id_pk" PRIMARY KEY("organization_id")
);
--> statement-breakpoint
SELECT donata_place('event_sequences', 'distributed');--> statement-breakpoint
CREATE TABLE "events" (
	"organization_id" bigint NOT NULL,
	"seq" bigint NOT NULL,
	"id" text NOT NULL,
	"type" text NOT NULL,
	"resource_type" text NOT NULL,
	"resource_id" bigint,
	"actor" jsonb NOT NULL,
	"request_id" text,
	"ip" text,
	"user_agent" text,
	"data" jsonb NOT NULL,
	"create_date" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_organization_id_seq_pk" PRIMARY KEY("organization_id","seq")
);
--> statement-breakpoint
SELECT donata_place('events', 'distributed');--> statement-breakpoint
ALTER TABLE "event_sequences" ADD CONSTRAINT "event_sequences_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "events_id_key" ON "events" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "events_type_idx" ON "events" USING btree ("organization_id","type","seq");--> statement-breakpoint
CREATE INDEX "events_resource_idx" ON "events" USING btree ("organization_id","resource_type","resource_id");--> statement-breakpoint
CREATE INDEX "events_create_date_idx" ON "events" USING btree ("organization_id","create_date");