package sqlite

import "strings"

// Statements of the record writes, prepared once on the writer connection at Open (see preparedTx).
const (
	qAllocID = `INSERT INTO counters (account_id, kind, last_id) VALUES (?, ?, 1)
		ON CONFLICT (account_id, kind) DO UPDATE SET last_id = last_id + 1 RETURNING last_id`
	qInsertRecord = `INSERT INTO records (account_id, kind, id, version, created_time, created_by,
		last_updated_time, last_updated_by, deleted_time, version_comment, vals) VALUES (?,?,?,?,?,?,?,?,?,?,?)`
	qRecord        = "SELECT " + recordCols + " FROM records WHERE account_id = ? AND kind = ? AND id = ?"
	qRecordRID     = "SELECT rid, " + recordCols + " FROM records WHERE account_id = ? AND kind = ? AND id = ?"
	qInsertHistory = `INSERT INTO history (account_id, kind, record_id, field_id, seq, user_id, time, old, new)
		VALUES (?,?,?,?,?,?,?,?,?)`
	qUpdateRecord = `UPDATE records SET version = ?, last_updated_time = ?, last_updated_by = ?, version_comment = ?,
		vals = ? WHERE account_id = ? AND kind = ? AND id = ?`
	qDeletedTime = "SELECT deleted_time FROM records WHERE account_id = ? AND kind = ? AND id = ?"
	qMarkDeleted = "UPDATE records SET deleted_time = ? WHERE account_id = ? AND kind = ? AND id = ?"
	qDeleteTerm  = `DELETE FROM terms WHERE account_id = ? AND kind = ? AND field_id = ? AND term = ? AND record_id = ?`
)

// preparedTermRows is how many rows the prepared forms of the terms insert take (1..preparedTermRows);
// longer inserts are run unprepared.
const preparedTermRows = 8

// qInsertTerms is the insert of n rows of terms.
func qInsertTerms(n int) string {
	var b strings.Builder
	b.WriteString("INSERT OR IGNORE INTO terms (account_id, kind, field_id, term, record_id, rid) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
	}
	return b.String()
}

var writeStatements = func() []string {
	qs := []string{qAllocID, qInsertRecord, qRecord, qRecordRID, qInsertHistory, qUpdateRecord, qDeletedTime, qMarkDeleted,
		qDeleteTerm}
	for n := 1; n <= preparedTermRows; n++ {
		qs = append(qs, qInsertTerms(n))
	}
	return qs
}()
