-- Gift history imported from another platform (docs/import.md): each gift and payment keeps its id
-- there, so importing the same file again changes nothing; an imported recurring gift charges nobody
-- until an admin turns it on (activation).
ALTER TABLE "donations" ADD COLUMN "external_id" text;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "activation" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "external_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "donations_external_id_key" ON "donations" USING btree ("organization_id","external_id") WHERE external_id is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "payments_external_id_key" ON "payments" USING btree ("organization_id","external_id") WHERE external_id is not null;--> statement-breakpoint
ALTER TABLE "donations" ADD CONSTRAINT "donations_activation_check" CHECK ("activation" in ('awaiting', 'card_requested'));