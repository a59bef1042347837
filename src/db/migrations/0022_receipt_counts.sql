-- Receipts join the collections whose unfiltered totals are counted (the REST list, GET /api/v1/receipts/):
-- the rows issued so far are counted once here; insertReceipt counts each new one.
INSERT INTO "collection_counts" ("organization_id", "collection", "count")
SELECT "organization_id", 'receipts', count(*) FROM "receipts" GROUP BY "organization_id"
ON CONFLICT ("organization_id", "collection") DO UPDATE SET "count" = excluded."count";
