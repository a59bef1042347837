-- Languages: a donor's (their last checkout's) and a user's (the panel's switcher); docs/localization.md.
-- Citus: a CHECK added to a table already distributed names its column unqualified (the workers' shards
-- have other names).
ALTER TABLE "supporters" ADD COLUMN "locale" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "locale" text;--> statement-breakpoint
ALTER TABLE "supporters" ADD CONSTRAINT "supporters_locale_check" CHECK ("locale" in ('en', 'it'));--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_locale_check" CHECK ("locale" in ('en', 'it'));