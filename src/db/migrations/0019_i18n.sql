ALTER TABLE "supporters" ADD COLUMN "locale" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "locale" text;--> statement-breakpoint
ALTER TABLE "supporters" ADD CONSTRAINT "supporters_locale_check" CHECK ("supporters"."locale" in ('en', 'it'));--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_locale_check" CHECK ("users"."locale" in ('en', 'it'));