package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/reqgate/reqgate/core"
)

// The statements of the record reads and writes: the hot path, which an engine may prepare ahead (Statements).
const (
	recordCols = `kind, id, version, created_time, created_by, last_updated_time, last_updated_by, deleted_time,
	version_comment, CAST(vals AS TEXT)`
	qRecord = "SELECT " + recordCols + " FROM records WHERE account_id = $1 AND kind = $2 AND id = $3"
	// qAllocID bumps the id counter of a kind, and returns no row for an unknown kind. The row lock of the
	// counter makes concurrent creators (from any replica) wait for each other, so ids never collide, and a
	// rolled-back create gives its id back.
	qAllocID = `INSERT INTO counters (account_id, kind, last_id)
		SELECT $1, $2, 1 WHERE EXISTS (SELECT 1 FROM objects WHERE account_id = $1 AND api_prefix = $2)
		ON CONFLICT (account_id, kind) DO UPDATE SET last_id = counters.last_id + 1 RETURNING last_id`
	// qRaiseID raises the id counter of a kind to at least $3 (a record created with an explicit id).
	qRaiseID = `INSERT INTO counters (account_id, kind, last_id) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, kind) DO UPDATE SET last_id = CASE WHEN excluded.last_id > counters.last_id
		THEN excluded.last_id ELSE counters.last_id END`
	qInsertRecord = `INSERT INTO records (account_id, kind, id, version, created_time, created_by,
		last_updated_time, last_updated_by, deleted_time, version_comment, vals)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
	qInsertHistory = `INSERT INTO history (account_id, kind, record_id, field_id, seq, user_id, time, old, new)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	qUpdateRecord = `UPDATE records SET version = $1, last_updated_time = $2, last_updated_by = $3,
		version_comment = $4, vals = $5 WHERE account_id = $6 AND kind = $7 AND id = $8`
	qMarkDeleted = "UPDATE records SET deleted_time = $1 WHERE account_id = $2 AND kind = $3 AND id = $4"
)

// lockRecord is qRecord for a record the transaction writes.
func (s *Store) lockRecord() string { return qRecord + s.d.ForUpdate }

func (s *Store) lockDeletedTime() string {
	return "SELECT deleted_time FROM records WHERE account_id = $1 AND kind = $2 AND id = $3" + s.d.ForUpdate
}

// Statements are the statements of the record reads (Reads) and writes (Writes) of d, for an engine that
// prepares statements ahead of use.
func Statements(d *Dialect) (reads, writes []string) {
	s := &Store{d: d}
	reads = []string{qRecord, qReceipt}
	writes = []string{qKeepReceipt, qPruneReceipts, qAllocID, qInsertRecord, s.lockRecord(), qInsertHistory, qUpdateRecord, s.lockDeletedTime(),
		qMarkDeleted, qDeleteTerm, qSearchable}
	for n := 1; n <= preparedTerms; n++ {
		writes = append(writes, qInsertTerms(n))
	}
	return reads, writes
}

// scanRecord reads the recordCols of a row.
func scanRecord(sc Row) (core.Record, error) {
	var r core.Record
	var vals string
	if err := sc.Scan(&r.Kind, &r.ID, &r.Version, &r.CreatedTime, &r.CreatedBy, &r.LastUpdatedTime,
		&r.LastUpdatedBy, &r.DeletedTime, &r.VersionComment, &vals); err != nil {
		return core.Record{}, err
	}
	v, err := decodeValues(vals)
	if err != nil {
		return core.Record{}, fmt.Errorf("record %s %d: %w", r.Kind, r.ID, err)
	}
	r.Values = v
	return r, nil
}

// encodeValues writes the values as one JSON object keyed by field id, leaving out empty values (absent and
// "" mean the same).
func encodeValues(v map[int64]string) (string, error) {
	b, err := json.Marshal(cleanValues(v))
	if err != nil {
		return "", fmt.Errorf("encode values: %w", err)
	}
	return string(b), nil
}

func decodeValues(s string) (map[int64]string, error) {
	v := map[int64]string{}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return v, nil
}

// cleanValues returns a copy of v without empty values.
func cleanValues(v map[int64]string) map[int64]string {
	out := make(map[int64]string, len(v))
	for k, s := range v {
		if s != "" {
			out[k] = s
		}
	}
	return out
}

// Record returns a record, deleted or not, or core.ErrNotFound.
func (s *Store) Record(ctx context.Context, accountID int64, kind string, id int64) (core.Record, error) {
	r, err := scanRecord(s.db.QueryRow(ctx, qRecord, accountID, kind, id))
	if err != nil {
		return core.Record{}, fmt.Errorf("record %s %d: %w", kind, id, notFound(err))
	}
	return r, nil
}

// searchable returns the searchable fields of a kind when the store caches them, read before the write
// transaction; nil without a cache: the transaction then reads them itself (firstTrip).
func (s *Store) searchable(ctx context.Context, accountID int64, kind string) (map[int64]core.FieldType, error) {
	if s.cache == nil {
		return nil, nil
	}
	ki, err := s.kindInfo(ctx, accountID, kind)
	if err != nil {
		return nil, err
	}
	return ki.searchable, nil
}

// firstTrip is the first round trip of a record write: query returns one row, which scan reads, and the
// searchable fields of the kind come along unless types holds them already. It returns the searchable fields.
func firstTrip(ctx context.Context, tx Tx, types map[int64]core.FieldType, accountID int64, kind string,
	scan func(Row) error, query string, args ...any) (map[int64]core.FieldType, error) {
	b := &Batch{}
	b.Queue(query, args...)
	if types == nil {
		queueSearchable(b, accountID, kind)
	}
	br := tx.SendBatch(ctx, b)
	if err := scan(br.QueryRow()); err != nil {
		br.Close()
		return nil, err
	}
	var err error
	if types == nil {
		types, err = readSearchable(br)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return types, err
}

// CreateRecord stores a new record under the next id of its kind, allocated inside the write transaction. It
// takes two round trips: allocate the id (and read the searchable fields), then insert the record and its
// index terms.
func (s *Store) CreateRecord(ctx context.Context, accountID int64, rec core.Record) (core.Record, error) {
	vals, err := encodeValues(rec.Values)
	if err != nil {
		return core.Record{}, err
	}
	rec.Version = 1
	rec.LastUpdatedTime, rec.LastUpdatedBy, rec.DeletedTime = rec.CreatedTime, rec.CreatedBy, 0
	defer s.recordWrite()()
	cached, err := s.searchable(ctx, accountID, rec.Kind)
	if err != nil {
		return core.Record{}, fmt.Errorf("create %s record: %w", rec.Kind, err)
	}
	err = s.write(ctx, func(tx Tx) error {
		// No row from qAllocID: an unknown kind.
		types, err := firstTrip(ctx, tx, cached, accountID, rec.Kind, func(r Row) error { return r.Scan(&rec.ID) },
			qAllocID, accountID, rec.Kind)
		if err != nil {
			return notFound(err)
		}
		if r := core.ReceiptOf(ctx); r != nil {
			r.RecordID = rec.ID
		}
		if err := keepReceipt(ctx, tx, accountID); err != nil {
			return err
		}
		b := &Batch{}
		queueInsertRecord(b, accountID, rec, vals)
		queueReindex(b, types, accountID, rec.Kind, rec.ID, nil, rec.Values)
		return runBatch(ctx, tx, b)
	})
	if err != nil {
		return core.Record{}, fmt.Errorf("create %s record: %w", rec.Kind, err)
	}
	rec.Values = cleanValues(rec.Values)
	return rec, nil
}

// write runs a record write in one transaction, refusing it once ctx's deadline has passed: the statements run
// under ctx (a wait for the writer or for a record's lock ends with it), and ctx is checked once more after the
// last statement, before the commit. A write refused so was rolled back: it returns core.ErrExpired. A commit
// that fails once the deadline has passed may have been applied all the same (PostgreSQL may have committed
// before the connection was given up): it returns core.ErrInDoubt.
func (s *Store) write(ctx context.Context, fn func(Tx) error) error {
	committing := false
	err := s.db.Write(ctx, func(tx Tx) error {
		committing = false // Write may run fn again after a conflict
		if err := fn(tx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		committing = true
		return nil
	})
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	if committing {
		return fmt.Errorf("%w: %w", core.ErrInDoubt, err)
	}
	// Whatever the driver made of the deadline (its own error, an interrupted statement, a cancelled query), the
	// transaction ended before its commit. A refusal of the store's own (not found, conflict) still says so.
	return fmt.Errorf("%w: %w", core.ErrExpired, err)
}

func queueInsertRecord(b *Batch, accountID int64, r core.Record, vals string) {
	b.Queue(qInsertRecord, accountID, r.Kind, r.ID, r.Version, r.CreatedTime, r.CreatedBy, r.LastUpdatedTime,
		r.LastUpdatedBy, r.DeletedTime, r.VersionComment, vals)
}

// UpdateRecord applies the update edit makes of a live record (core.Update.Changes decides whether it makes a
// new version); every changed value becomes one history entry whose sequence number is the version the update
// produces. It takes two round trips: lock and read the record (and the searchable fields), then write the
// history, the record and its changed index terms. The lock (Dialect.ForUpdate on PostgreSQL; SQLite's write
// transactions are exclusive) serialises the writers of one record across replicas: the second waits, then
// reads the row the first committed and hands that to its edit, so neither the version nor a change is lost
// and a version check in edit sees the version it would replace.
func (s *Store) UpdateRecord(ctx context.Context, accountID int64, kind string, id int64, edit core.Edit) (core.Record, error) {
	defer s.recordWrite()()
	cached, err := s.searchable(ctx, accountID, kind)
	if err != nil {
		return core.Record{}, fmt.Errorf("update %s record %d: %w", kind, id, err)
	}
	var rec core.Record
	err = s.write(ctx, func(tx Tx) error {
		types, err := firstTrip(ctx, tx, cached, accountID, kind, func(r Row) (err error) {
			rec, err = scanRecord(r)
			return err
		}, s.lockRecord(), accountID, kind, id)
		if err != nil {
			return notFound(err)
		}
		if rec.DeletedTime != 0 {
			return core.ErrNotFound
		}
		u, err := edit(rec)
		if err != nil {
			return err
		}
		// An update that changes nothing keeps its receipt too: a retry must not apply it over a later write.
		if err := keepReceipt(ctx, tx, accountID); err != nil {
			return err
		}
		changed, newVersion := u.Changes(rec)
		if !newVersion {
			return nil // nothing else is written; the lock ends with the transaction
		}
		old := maps.Clone(rec.Values)
		rec.Version++
		rec.LastUpdatedTime, rec.LastUpdatedBy = u.Time, u.UserID
		rec.VersionComment = u.Comment()
		b := &Batch{}
		for _, fid := range changed {
			was, now := old[fid], u.Values[fid]
			if now == "" {
				delete(rec.Values, fid)
			} else {
				rec.Values[fid] = now
			}
			b.Queue(qInsertHistory, accountID, kind, id, fid, rec.Version, u.UserID, u.Time, was, now)
		}
		vals, err := encodeValues(rec.Values)
		if err != nil {
			return err
		}
		b.Queue(qUpdateRecord, rec.Version, rec.LastUpdatedTime, rec.LastUpdatedBy, rec.VersionComment, vals,
			accountID, kind, id)
		queueReindex(b, types, accountID, kind, id, old, rec.Values)
		if err := runBatch(ctx, tx, b); err != nil {
			return fmt.Errorf("write update: %w", err)
		}
		return nil
	})
	if err != nil {
		return core.Record{}, fmt.Errorf("update %s record %d: %w", kind, id, err)
	}
	return rec, nil
}

// DeleteRecord soft-deletes a live record: core.ErrNotFound when missing, core.ErrConflict when already deleted.
// A check is given the record read under the write lock (the whole row; without a check only deleted_time).
func (s *Store) DeleteRecord(ctx context.Context, accountID int64, kind string, id int64, userID, at int64, check core.Check) error {
	if at <= 0 {
		at = time.Now().Unix() // deleted_time 0 means live, so a delete always stores a positive time
	}
	err := s.write(ctx, func(tx Tx) error {
		var deleted int64
		var rec core.Record
		var err error
		if check == nil {
			err = tx.QueryRow(ctx, s.lockDeletedTime(), accountID, kind, id).Scan(&deleted)
		} else {
			// A conditional delete needs the whole record, read under the same lock.
			rec, err = scanRecord(tx.QueryRow(ctx, s.lockRecord(), accountID, kind, id))
			deleted = rec.DeletedTime
		}
		if err != nil {
			return notFound(err)
		}
		if deleted != 0 {
			return core.ErrConflict
		}
		if check != nil {
			if err := check(rec); err != nil {
				return err
			}
		}
		if err := keepReceipt(ctx, tx, accountID); err != nil {
			return err
		}
		return tx.Exec(ctx, qMarkDeleted, at, accountID, kind, id)
	})
	if err != nil {
		return fmt.Errorf("delete %s record %d: %w", kind, id, err)
	}
	return nil
}

// History returns the changes of one field of a record, oldest first; core.ErrNotFound when the record does
// not exist (a deleted record still has its history).
func (s *Store) History(ctx context.Context, accountID int64, kind string, id, fieldID int64) ([]core.Change, error) {
	var ok bool
	if err := s.db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM records WHERE account_id = $1 AND kind = $2 AND id = $3)",
		accountID, kind, id).Scan(&ok); err != nil {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, err)
	}
	if !ok {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, core.ErrNotFound)
	}
	cs := []core.Change{}
	err := each(ctx, s.db, `SELECT user_id, time, old, new FROM history
		WHERE account_id = $1 AND kind = $2 AND record_id = $3 AND field_id = $4 ORDER BY seq`,
		[]any{accountID, kind, id, fieldID}, func(rows Rows) error {
			c := core.Change{FieldID: fieldID}
			err := rows.Scan(&c.UserID, &c.Time, &c.Old, &c.New)
			cs = append(cs, c)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, err)
	}
	return cs, nil
}
