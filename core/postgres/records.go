package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/storemetrics"
)

const recordCols = `kind, id, version, created_time, created_by, last_updated_time, last_updated_by, deleted_time,
	version_comment, vals::text`

func scanRecord(sc pgx.Row) (core.Record, error) {
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
	defer storemetrics.Record.UpdateDuration(time.Now())
	r, err := scanRecord(s.pool.QueryRow(ctx, "SELECT "+recordCols+
		" FROM records WHERE account_id = $1 AND kind = $2 AND id = $3", accountID, kind, id))
	if err != nil {
		return core.Record{}, fmt.Errorf("record %s %d: %w", kind, id, notFound(err))
	}
	return r, nil
}

// CreateRecord stores a new record under the next id of its kind. The id comes from the counters row,
// bumped with INSERT ... ON CONFLICT DO UPDATE ... RETURNING inside the transaction: the row lock makes
// concurrent creators (from any replica) wait for each other, so ids never collide, and a rolled-back
// create gives its id back.
func (s *Store) CreateRecord(ctx context.Context, accountID int64, rec core.Record) (core.Record, error) {
	defer storemetrics.CreateRecord.UpdateDuration(time.Now())
	vals, err := encodeValues(rec.Values)
	if err != nil {
		return core.Record{}, err
	}
	rec.Version = 1
	rec.LastUpdatedTime, rec.LastUpdatedBy, rec.DeletedTime = rec.CreatedTime, rec.CreatedBy, 0
	err = s.writeTx(ctx, func(tx pgx.Tx) error {
		// Two round trips: allocate the id (no row: unknown kind) and read the searchable fields; then
		// insert the record and its index terms.
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO counters (account_id, kind, last_id)
			SELECT $1, $2, 1 WHERE EXISTS (SELECT 1 FROM objects WHERE account_id = $1 AND api_prefix = $2)
			ON CONFLICT (account_id, kind) DO UPDATE SET last_id = counters.last_id + 1 RETURNING last_id`,
			accountID, rec.Kind)
		queueSearchableFields(b, accountID, rec.Kind)
		br := tx.SendBatch(ctx, b)
		if err := br.QueryRow().Scan(&rec.ID); err != nil {
			br.Close()
			if errors.Is(err, pgx.ErrNoRows) {
				return core.ErrNotFound
			}
			return fmt.Errorf("allocate id: %w", err)
		}
		types, err := readSearchableFields(br)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		b = &pgx.Batch{}
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

const insertRecordSQL = `INSERT INTO records (account_id, kind, id, version, created_time, created_by,
	last_updated_time, last_updated_by, deleted_time, version_comment, vals)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text::jsonb)`

func insertRecord(ctx context.Context, tx pgx.Tx, accountID int64, r core.Record, vals string) error {
	_, err := tx.Exec(ctx, insertRecordSQL, accountID, r.Kind, r.ID, r.Version, r.CreatedTime, r.CreatedBy,
		r.LastUpdatedTime, r.LastUpdatedBy, r.DeletedTime, r.VersionComment, vals)
	if err != nil {
		return fmt.Errorf("insert record: %w", err)
	}
	return nil
}

func queueInsertRecord(b *pgx.Batch, accountID int64, r core.Record, vals string) {
	b.Queue(insertRecordSQL, accountID, r.Kind, r.ID, r.Version, r.CreatedTime, r.CreatedBy,
		r.LastUpdatedTime, r.LastUpdatedBy, r.DeletedTime, r.VersionComment, vals)
}

// runBatch sends the statements of b in one round trip and returns the first error.
func runBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	br := tx.SendBatch(ctx, b)
	var first error
	for range b.Len() {
		if _, err := br.Exec(); err != nil && first == nil {
			first = err
		}
	}
	if err := br.Close(); first == nil {
		first = err
	}
	return first
}

// UpdateRecord applies a partial update to a live record (core.Update.Changes decides whether it makes a new
// version); every changed value becomes one history entry whose sequence number is the version the update
// produces. SELECT ... FOR UPDATE serialises updates of one
// record across replicas: the second waits, then reads the row the first committed, so neither the version
// nor a change is lost.
func (s *Store) UpdateRecord(ctx context.Context, accountID int64, kind string, id int64, u core.Update) (core.Record, error) {
	defer storemetrics.UpdateRecord.UpdateDuration(time.Now())
	var rec core.Record
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		// Two round trips: lock and read the record with the kind's searchable fields; then write the
		// history, the record and its changed index terms.
		b := &pgx.Batch{}
		b.Queue("SELECT "+recordCols+" FROM records WHERE account_id = $1 AND kind = $2 AND id = $3 FOR UPDATE",
			accountID, kind, id)
		queueSearchableFields(b, accountID, kind)
		br := tx.SendBatch(ctx, b)
		var err error
		rec, err = scanRecord(br.QueryRow())
		if err != nil {
			br.Close()
			return notFound(err)
		}
		types, err := readSearchableFields(br)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if rec.DeletedTime != 0 {
			return core.ErrNotFound
		}
		changed, newVersion := u.Changes(rec)
		if !newVersion {
			return nil // the lock ends with the transaction; nothing was written
		}
		old := maps.Clone(rec.Values)
		rec.Version++
		rec.LastUpdatedTime, rec.LastUpdatedBy = u.Time, u.UserID
		rec.VersionComment = u.Comment()
		b = &pgx.Batch{}
		for _, fid := range changed {
			was, now := old[fid], u.Values[fid]
			if now == "" {
				delete(rec.Values, fid)
			} else {
				rec.Values[fid] = now
			}
			b.Queue(`INSERT INTO history (account_id, kind, record_id, field_id, seq, user_id, time, old, new)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				accountID, kind, id, fid, rec.Version, u.UserID, u.Time, was, now)
		}
		vals, err := encodeValues(rec.Values)
		if err != nil {
			return err
		}
		b.Queue(`UPDATE records SET version = $1, last_updated_time = $2, last_updated_by = $3,
			version_comment = $4, vals = $5::text::jsonb WHERE account_id = $6 AND kind = $7 AND id = $8`,
			rec.Version, rec.LastUpdatedTime, rec.LastUpdatedBy, rec.VersionComment, vals, accountID, kind, id)
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
func (s *Store) DeleteRecord(ctx context.Context, accountID int64, kind string, id int64, userID, at int64) error {
	defer storemetrics.DeleteRecord.UpdateDuration(time.Now())
	if at <= 0 {
		at = time.Now().Unix() // deleted_time 0 means live, so a delete always stores a positive time
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		var deleted int64
		err := tx.QueryRow(ctx, `SELECT deleted_time FROM records WHERE account_id = $1 AND kind = $2 AND id = $3
			FOR UPDATE`, accountID, kind, id).Scan(&deleted)
		if err != nil {
			return notFound(err)
		}
		if deleted != 0 {
			return core.ErrConflict
		}
		_, err = tx.Exec(ctx, "UPDATE records SET deleted_time = $1 WHERE account_id = $2 AND kind = $3 AND id = $4",
			at, accountID, kind, id)
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
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM records WHERE account_id = $1 AND kind = $2
		AND id = $3)`, accountID, kind, id).Scan(&ok); err != nil {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, err)
	}
	if !ok {
		return nil, fmt.Errorf("history of %s %d: %w", kind, id, core.ErrNotFound)
	}
	rows, err := s.pool.Query(ctx, `SELECT user_id, time, old, new FROM history
		WHERE account_id = $1 AND kind = $2 AND record_id = $3 AND field_id = $4 ORDER BY seq`,
		accountID, kind, id, fieldID)
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
