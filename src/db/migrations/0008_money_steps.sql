CREATE TABLE "sandbox_charges" (
	"idempotency_key" text PRIMARY KEY NOT NULL,
	"intent_id" text NOT NULL,
	"state" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"currency" text NOT NULL,
	"failure_code" text,
	"failure_message" text,
	"refund_date" timestamp (3) with time zone,
	"create_date" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sandbox_charges_intent_id_unique" UNIQUE("intent_id")
);
--> statement-breakpoint
ALTER TABLE "checkout_attempts" ALTER COLUMN "failure_code" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "state" text DEFAULT 'DECLINED' NOT NULL;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "failure_message" text;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "frequency" smallint;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "processor_intent_id" text;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "request_key" text;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "request_hash" text;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "gift" jsonb;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD COLUMN "update_date" timestamp (3) with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "billing_cycle" integer;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "refund_request_date" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "checkout_attempts_idempotency_key_idx" ON "checkout_attempts" USING btree ("idempotency_key") WHERE "checkout_attempts"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "checkout_attempts_pending_idx" ON "checkout_attempts" USING btree ("update_date") WHERE "checkout_attempts"."state" = 'PENDING';--> statement-breakpoint
CREATE INDEX "payments_idempotency_key_idx" ON "payments" USING btree ("idempotency_key") WHERE "payments"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "payments_processor_intent_idx" ON "payments" USING btree ("processor_intent_id") WHERE "payments"."processor_intent_id" is not null;--> statement-breakpoint
CREATE INDEX "payments_unsettled_idx" ON "payments" USING btree ("update_date") WHERE ("payments"."state" = 'PENDING' and "payments"."idempotency_key" is not null) or "payments"."refund_request_date" is not null;--> statement-breakpoint
ALTER TABLE "checkout_attempts" ADD CONSTRAINT "checkout_attempts_state_check" CHECK ("checkout_attempts"."state" in ('PENDING', 'SUCCEEDED', 'DECLINED', 'ABANDONED'));