ALTER TABLE "applications" ADD COLUMN "owner_organization_id" bigint;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "archive_date" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "supporters" ADD COLUMN "erase_date" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_owner_organization_id_organizations_id_fk" FOREIGN KEY ("owner_organization_id") REFERENCES "public"."organizations"("id") ON DELETE set null ON UPDATE no action;