-- A consent record may come from an imported file (docs/import.md), not only from a checkout.
ALTER TABLE "consent_records" DROP CONSTRAINT "consent_records_source_check";--> statement-breakpoint
ALTER TABLE "consent_records" ADD CONSTRAINT "consent_records_source_check" CHECK (source in ('checkout', 'import'));
