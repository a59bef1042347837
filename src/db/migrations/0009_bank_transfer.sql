ALTER TABLE "organizations" ADD COLUMN "bank_account_name" text;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "iban" text;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "bic" text;