-- Uploaded images (an organization's logo; a campaign's cover) and their resized copies (docs/images.md).
-- Citus: the new tables have foreign keys to a reference table (organizations), which must be written
-- over one connection per node in the transaction that places them.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';--> statement-breakpoint
CREATE TABLE "images" (
	"organization_id" bigint NOT NULL,
	"id" text NOT NULL,
	"purpose" text NOT NULL,
	"source_type" text NOT NULL,
	"source_bytes" integer NOT NULL,
	"width" integer NOT NULL,
	"height" integer NOT NULL,
	"sha256" text NOT NULL,
	"create_date" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "images_organization_id_id_pk" PRIMARY KEY("organization_id","id"),
	CONSTRAINT "images_purpose_check" CHECK ("images"."purpose" in ('logo', 'cover'))
);
--> statement-breakpoint
SELECT donata_place('images', 'distributed');--> statement-breakpoint
CREATE TABLE "image_renditions" (
	"organization_id" bigint NOT NULL,
	"image_id" text NOT NULL,
	"width" integer NOT NULL,
	"height" integer NOT NULL,
	"content_type" text NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "image_renditions_organization_id_image_id_width_pk" PRIMARY KEY("organization_id","image_id","width")
);
--> statement-breakpoint
SELECT donata_place('image_renditions', 'distributed');--> statement-breakpoint
ALTER TABLE "images" ADD CONSTRAINT "images_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "image_renditions" ADD CONSTRAINT "image_renditions_image_fk" FOREIGN KEY ("organization_id","image_id") REFERENCES "public"."images"("organization_id","id") ON DELETE cascade ON UPDATE no action;
