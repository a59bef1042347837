-- The audit log is read from the events from now on (src/modules/audit/). What an update changed,
-- field by field, is kept with its event; the changes the old audit table recorded move into the
-- events as they were (type audit.legacy, members only), numbered after each organization's events.
-- On a Citus cluster, one connection per node for the rest of the upgrade's transaction: a later
-- statement on a table with a foreign key to a reference table (0018's) is refused after a parallel one.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "changes" jsonb;--> statement-breakpoint
INSERT INTO "events" ("organization_id", "seq", "id", "type", "resource_type", "resource_id", "actor", "data", "create_date")
SELECT a."organization_id",
	coalesce(s."last_seq", 0) + row_number() OVER (PARTITION BY a."organization_id" ORDER BY a."create_date", a."id"),
	'evt_' || substr(md5('audit:' || a."organization_id" || ':' || a."id"), 1, 20),
	'audit.legacy',
	'organization',
	a."organization_id",
	CASE
		WHEN a."actor_user_id" IS NOT NULL THEN jsonb_build_object('type', 'user', 'user_id', a."actor_user_id", 'label', a."actor")
		WHEN a."actor" LIKE 'application %' THEN jsonb_build_object('type', 'application', 'application_id', substring(a."actor" from 13)::bigint, 'label', a."actor")
		WHEN a."actor" LIKE 'donor %' THEN jsonb_build_object('type', 'donor', 'supporter_id', NULL, 'label', 'donor')
		WHEN a."actor" = 'cli' THEN jsonb_build_object('type', 'system', 'label', 'cli')
		WHEN a."actor" LIKE '%@%' THEN jsonb_build_object('type', 'user', 'user_id', NULL, 'label', a."actor")
		ELSE jsonb_build_object('type', 'system', 'label', 'platform')
	END,
	jsonb_build_object('action', a."action", 'details', a."details"),
	a."create_date"
FROM "audit_events" a
LEFT JOIN "event_sequences" s ON s."organization_id" = a."organization_id";--> statement-breakpoint
INSERT INTO "event_sequences" ("organization_id", "last_seq")
SELECT "organization_id", count(*) FROM "audit_events" GROUP BY "organization_id"
ON CONFLICT ("organization_id") DO UPDATE SET "last_seq" = "event_sequences"."last_seq" + excluded."last_seq";--> statement-breakpoint
DROP TABLE "audit_events" CASCADE;
