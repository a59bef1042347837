ALTER TABLE "campaigns" ADD COLUMN "allow_cover_fee" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "covered_fee" numeric(14, 2) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "covered_fee" numeric(14, 2) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "cover_fee_percent" numeric(5, 2) DEFAULT 2.9 NOT NULL;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "cover_fee_fixed" numeric(14, 2) DEFAULT 0.3 NOT NULL;