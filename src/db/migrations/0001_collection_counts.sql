-- Exact per-organization totals for unfiltered lists, maintained in the writing transaction.
CREATE FUNCTION donata_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO collection_counts AS c (organization_id, collection, count)
      SELECT organization_id, TG_TABLE_NAME, count(*) FROM new_rows GROUP BY organization_id
      ORDER BY organization_id
    ON CONFLICT (organization_id, collection) DO UPDATE SET count = c.count + excluded.count;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE collection_counts AS c SET count = c.count - d.n
      FROM (SELECT organization_id, count(*) AS n FROM old_rows GROUP BY organization_id) AS d
      WHERE c.organization_id = d.organization_id AND c.collection = TG_TABLE_NAME;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER campaigns_count_insert AFTER INSERT ON campaigns REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER campaigns_count_delete AFTER DELETE ON campaigns REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER supporters_count_insert AFTER INSERT ON supporters REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER supporters_count_delete AFTER DELETE ON supporters REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER donations_count_insert AFTER INSERT ON donations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER donations_count_delete AFTER DELETE ON donations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER payments_count_insert AFTER INSERT ON payments REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER payments_count_delete AFTER DELETE ON payments REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER checkouts_count_insert AFTER INSERT ON checkouts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER checkouts_count_delete AFTER DELETE ON checkouts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER payment_methods_count_insert AFTER INSERT ON payment_methods REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
--> statement-breakpoint
CREATE TRIGGER payment_methods_count_delete AFTER DELETE ON payment_methods REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION donata_count_rows();
