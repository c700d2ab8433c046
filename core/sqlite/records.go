package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/storemetrics"
)

const recordCols = `kind, id, version, created_time, created_by, last_updated_time, last_updated_by, deleted_time,
	version_comment, vals`

// scanRecord reads the recordCols of a row, after the extra columns the query selects first.
func scanRecord(sc interface{ Scan(...any) error }, extra ...any) (core.Record, error) {
	var r core.Record
	var vals string
	if err := sc.Scan(append(extra, &r.Kind, &r.ID, &r.Version, &r.CreatedTime, &r.CreatedBy, &r.LastUpdatedTime,
		&r.LastUpdatedBy, &r.DeletedTime, &r.VersionComment, &vals)...); err != nil {
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
	clean := make(map[int64]string, len(v))
	for k, s := range v {
		if s != "" {
			clean[k] = s
		}
	}
	b, err := json.Marshal(clean)
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

// Record returns a record, deleted or not, or core.ErrNotFound.
func (s *Store) Record(ctx context.Context, accountID int64, kind string, id int64) (core.Record, error) {
	defer storemetrics.Record.UpdateDuration(time.Now())
	r, err := scanRecord(s.readRecord.QueryRowContext(ctx, accountID, kind, id))
	if err != nil {
		return core.Record{}, fmt.Errorf("record %s %d: %w", kind, id, notFound(err))
	}
	return r, nil
}

// CreateRecord stores a new record under the next id of its kind, allocated inside the write transaction.
func (s *Store) CreateRecord(ctx context.Context, accountID int64, rec core.Record) (core.Record, error) {
	defer storemetrics.CreateRecord.UpdateDuration(time.Now())
	vals, err := encodeValues(rec.Values)
	if err != nil {
		return core.Record{}, err
	}
	rec.Version = 1
	rec.LastUpdatedTime, rec.LastUpdatedBy, rec.DeletedTime = rec.CreatedTime, rec.CreatedBy, 0
	s.applyMu.RLock()
	defer s.applyMu.RUnlock()
	ki, err := s.kindInfo(ctx, accountID, rec.Kind)
	if err != nil {
		return core.Record{}, fmt.Errorf("create %s record: %w", rec.Kind, err)
	}
	err = s.writeTx(ctx, func(sqltx *sql.Tx) error {
		tx := s.prepared(sqltx)
		if err := tx.QueryRowContext(ctx, qAllocID, accountID, rec.Kind).Scan(&rec.ID); err != nil {
			return fmt.Errorf("allocate id: %w", err)
		}
		rid, err := insertRecord(ctx, tx, accountID, rec, vals)
		if err != nil {
			return err
		}
		return reindex(ctx, tx, accountID, rec.Kind, rec.ID, rid, ki.searchable, nil, rec.Values)
	})
	if err != nil {
		return core.Record{}, fmt.Errorf("create %s record: %w", rec.Kind, err)
	}
	rec.Values = cleanValues(rec.Values)
	return rec, nil
}

// insertRecord inserts a record row and returns its rowid.
func insertRecord(ctx context.Context, tx execer, accountID int64, r core.Record, vals string) (int64, error) {
	res, err := tx.ExecContext(ctx, qInsertRecord, accountID, r.Kind, r.ID, r.Version, r.CreatedTime, r.CreatedBy, r.LastUpdatedTime, r.LastUpdatedBy,
		r.DeletedTime, r.VersionComment, vals)
	if err != nil {
		return 0, fmt.Errorf("insert record: %w", err)
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("insert record: %w", err)
	}
	return rid, nil
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

// UpdateRecord applies a partial update to a live record (core.Update.Changes decides whether it makes a new
// version); every changed value becomes one history entry whose sequence number is the version the update
// produces.
func (s *Store) UpdateRecord(ctx context.Context, accountID int64, kind string, id int64, u core.Update) (core.Record, error) {
	defer storemetrics.UpdateRecord.UpdateDuration(time.Now())
	s.applyMu.RLock()
	defer s.applyMu.RUnlock()
	ki, err := s.kindInfo(ctx, accountID, kind)
	if err != nil {
		return core.Record{}, fmt.Errorf("update %s record %d: %w", kind, id, err)
	}
	var rec core.Record
	err = s.writeTx(ctx, func(sqltx *sql.Tx) error {
		tx := s.prepared(sqltx)
		var err error
		var rid int64
		rec, err = scanRecord(tx.QueryRowContext(ctx, qRecordRID, accountID, kind, id), &rid)
		if err != nil {
			return notFound(err)
		}
		if rec.DeletedTime != 0 {
			return core.ErrNotFound
		}
		changed, newVersion := u.Changes(rec)
		if !newVersion {
			return nil
		}
		old := maps.Clone(rec.Values)
		rec.Version++
		rec.LastUpdatedTime, rec.LastUpdatedBy = u.Time, u.UserID
		rec.VersionComment = u.Comment()
		for _, fid := range changed {
			was, now := old[fid], u.Values[fid]
			if now == "" {
				delete(rec.Values, fid)
			} else {
				rec.Values[fid] = now
			}
			if _, err := tx.ExecContext(ctx, qInsertHistory, accountID, kind, id, fid, rec.Version, u.UserID, u.Time, was, now); err != nil {
				return fmt.Errorf("insert history: %w", err)
			}
		}
		vals, err := encodeValues(rec.Values)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qUpdateRecord, rec.Version, rec.LastUpdatedTime, rec.LastUpdatedBy, rec.VersionComment, vals,
			accountID, kind, id); err != nil {
			return fmt.Errorf("update record: %w", err)
		}
		return reindex(ctx, tx, accountID, kind, id, rid, ki.searchable, old, rec.Values)
	})
	if err != nil {
		return core.Record{}, fmt.Errorf("update %s record %d: %w", kind, id, err)
	}
	return rec, nil
}

// DeleteRecord soft-deletes a live record: core.ErrNotFound when missing, core.ErrConflict when already deleted.
func (s *Store) DeleteRecord(ctx context.Context, accountID int64, kind string, id int64, userID, at int64) error {
	defer storemetrics.DeleteRecord.UpdateDuration(time.Now())
	if at <= 0 {
		at = time.Now().Unix() // deleted_time 0 means live, so a delete always stores a positive time
	}
	err := s.writeTx(ctx, func(sqltx *sql.Tx) error {
		tx := s.prepared(sqltx)
		var deleted int64
		err := tx.QueryRowContext(ctx, qDeletedTime, accountID, kind, id).Scan(&deleted)
		if err != nil {
			return notFound(err)
		}
		if deleted != 0 {
			return core.ErrConflict
		}
		_, err = tx.ExecContext(ctx, qMarkDeleted, at, accountID, kind, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete %s record %d: %w", kind, id, err)
	}
	return nil
}

// History returns the changes of one field of a record, oldest first; core.ErrNotFound when the record does
// not exist (a deleted record still has its history).
func (s *Store) History(ctx context.Context, accountID int64, kind string, id, fieldID int64) ([]core.Change, error) {
	defer storemetrics.History.UpdateDuration(time.Now())
	var ok bool
	if err := s.r.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM records WHERE account_id = ? AND kind = ? AND id = ?)",
		accountID, kind, id).Scan(&ok); err != nil {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, err)
	}
	if !ok {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, core.ErrNotFound)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT user_id, time, old, new FROM history
		WHERE account_id = ? AND kind = ? AND record_id = ? AND field_id = ? ORDER BY seq`, accountID, kind, id, fieldID)
	if err != nil {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, err)
	}
	defer rows.Close()
	cs := []core.Change{}
	for rows.Next() {
		c := core.Change{FieldID: fieldID}
		if err := rows.Scan(&c.UserID, &c.Time, &c.Old, &c.New); err != nil {
			return nil, fmt.Errorf("history of %s %d: %w", kind, id, err)
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, err)
	}
	return cs, nil
}
