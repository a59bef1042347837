CREATE UNIQUE INDEX "donations_id_key" ON "donations" USING btree ("id");--> statement-breakpoint
CREATE UNIQUE INDEX "supporters_id_key" ON "supporters" USING btree ("id");