-- Supporters merged into another (docs/admin.md): where a merged supporter's id now points. Citus: the new
-- table has a foreign key to a reference table (organizations), written over one connection per node in
-- the transaction that places it.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';--> statement-breakpoint
CREATE TABLE "supporter_merges" (
	"organization_id" bigint NOT NULL,
	"merged_id" bigint NOT NULL,
	"kept_id" bigint NOT NULL,
	"merge_date" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "supporter_merges_organization_id_merged_id_pk" PRIMARY KEY("organization_id","merged_id")
);
--> statement-breakpoint
SELECT donata_place('supporter_merges', 'distributed');--> statement-breakpoint
ALTER TABLE "supporter_merges" ADD CONSTRAINT "supporter_merges_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "supporter_merges" ADD CONSTRAINT "supporter_merges_kept_fk" FOREIGN KEY ("organization_id","kept_id") REFERENCES "public"."supporters"("organization_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "supporter_merges_kept_idx" ON "supporter_merges" USING btree ("organization_id","kept_id");