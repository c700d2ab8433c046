-- 0002: terms also hold the rowid (rid) of their record, so a field search looks records up by rowid: one
-- b-tree search per hit instead of two (the id index, then the table).
ALTER TABLE terms ADD COLUMN rid INTEGER NOT NULL DEFAULT 0;
UPDATE terms SET rid = (SELECT r.rid FROM records r
	WHERE r.account_id = terms.account_id AND r.kind = terms.kind AND r.id = terms.record_id);
