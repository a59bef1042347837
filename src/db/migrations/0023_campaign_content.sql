-- Campaigns that convert (docs/campaigns.md, docs/embed.md): a campaign's story, cover, status, dates, impact
-- lines, questions and tribute gifts; a donation's tribute and answers; the origins allowed to embed an organization.
-- Citus: a reference table (organizations) and distributed ones change in one transaction, over one connection per node.
-- The checks name their columns bare: on an upgraded cluster Citus runs them on each shard, whose table has another name.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "story" text;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "cover_image_url" text;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "status" text DEFAULT 'published' NOT NULL;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "start_date" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "end_date" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "ask_impacts" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "questions" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "allow_tribute" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "tribute_type" text;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "tribute_name" text;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "tribute_message" text;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "tribute_recipient_name" text;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "tribute_recipient_email" text;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "tribute_donor_name" text;--> statement-breakpoint
ALTER TABLE "donations" ADD COLUMN "answers" jsonb;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "embed_origins" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_status_check" CHECK ("status" in ('draft', 'published'));--> statement-breakpoint
ALTER TABLE "donations" ADD CONSTRAINT "donations_tribute_type_check" CHECK ("tribute_type" in ('honor', 'memory'));