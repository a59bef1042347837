-- A supporter's id on the platform it was imported from (docs/import.md): importing the same file
-- again matches it rather than adding the supporter twice. Unique within the organization.
ALTER TABLE "supporters" ADD COLUMN "external_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "supporters_external_id_key" ON "supporters" USING btree ("organization_id","external_id") WHERE external_id is not null;