ALTER TABLE "applications" ALTER COLUMN "client_secret_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "client_type" text DEFAULT 'confidential' NOT NULL;--> statement-breakpoint
ALTER TABLE "oauth_authorization_codes" ADD COLUMN "scope" text[];--> statement-breakpoint
ALTER TABLE "oauth_tokens" ADD COLUMN "scope" text[];--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_client_type_check" CHECK ("applications"."client_type" in ('confidential', 'public'));--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_client_secret_check" CHECK (("applications"."client_type" = 'public') = ("applications"."client_secret_hash" is null));