package sqlite

// This file (added for `reqgate store copy`, issue 8) writes out whole accounts as core.Snapshot.

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/reqgate/reqgate/core"
)

var _ core.Exporter = (*Store)(nil)

// APIKeys lists the api_keys of every account, sorted byte-wise.
func (s *Store) APIKeys(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT api_key FROM accounts ORDER BY api_key")
	if err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("api keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	return keys, nil
}

// Export reads one account in one read transaction (a WAL snapshot), so it is consistent while the core
// keeps writing. core.ErrNotFound for an unknown api_key.
func (s *Store) Export(ctx context.Context, apiKey string) (*core.Snapshot, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("export account %q: %w", apiKey, err)
	}
	defer tx.Rollback()
	snap, err := exportAccount(ctx, tx, apiKey)
	if err != nil {
		return nil, fmt.Errorf("export account %q: %w", apiKey, err)
	}
	return snap, nil
}

func exportAccount(ctx context.Context, tx *sql.Tx, apiKey string) (*core.Snapshot, error) {
	snap := &core.Snapshot{APIKey: apiKey, Counters: map[string]int64{}}
	var id int64
	if err := tx.QueryRowContext(ctx, "SELECT id, name FROM accounts WHERE api_key = ?", apiKey).Scan(&id, &snap.Name); err != nil {
		return nil, notFound(err)
	}
	if err := eachRow(ctx, tx, "users", "SELECT "+userCols+" FROM users WHERE account_id = ? ORDER BY id", id,
		func(rows *sql.Rows) error {
			u, err := scanUser(rows)
			snap.Users = append(snap.Users, u)
			return err
		}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, tx, "objects", `SELECT unique_id, api_prefix, name_singular, name_plural, description,
		id_prefix, custom FROM objects WHERE account_id = ? ORDER BY api_prefix`, id, func(rows *sql.Rows) error {
		var o core.Object
		err := rows.Scan(&o.UniqueID, &o.APIPrefix, &o.NameSingular, &o.NamePlural, &o.Description, &o.IDPrefix, &o.Custom)
		snap.Objects = append(snap.Objects, o)
		return err
	}); err != nil {
		return nil, err
	}
	for _, o := range snap.Objects {
		fs, err := loadFields(ctx, tx, id, o.APIPrefix)
		if err != nil {
			return nil, fmt.Errorf("fields of %s: %w", o.APIPrefix, err)
		}
		snap.Fields = append(snap.Fields, fs...)
	}
	if err := eachRow(ctx, tx, "views", `SELECT id, kind, name, description, created_by, conditions FROM views
		WHERE account_id = ? ORDER BY id`, id, func(rows *sql.Rows) error {
		var v core.View
		err := rows.Scan(&v.ID, &v.Kind, &v.Name, &v.Description, &v.CreatedBy, &v.Conditions)
		snap.Views = append(snap.Views, v)
		return err
	}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, tx, "records", "SELECT "+recordCols+" FROM records WHERE account_id = ? ORDER BY kind, id",
		id, func(rows *sql.Rows) error {
			r, err := scanRecord(rows)
			snap.Records = append(snap.Records, r)
			return err
		}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, tx, "history", `SELECT kind, record_id, seq, field_id, user_id, time, old, new FROM history
		WHERE account_id = ? ORDER BY kind, record_id, field_id, seq`, id, func(rows *sql.Rows) error {
		var h core.HistoryEntry
		err := rows.Scan(&h.Kind, &h.RecordID, &h.Seq, &h.FieldID, &h.UserID, &h.Time, &h.Old, &h.New)
		snap.History = append(snap.History, h)
		return err
	}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, tx, "relationships", `SELECT from_kind, from_id, to_kind, to_id, type FROM relationships
		WHERE account_id = ? ORDER BY from_kind, from_id, to_kind, to_id, type`, id, func(rows *sql.Rows) error {
		var x core.StoredRelation
		err := rows.Scan(&x.FromKind, &x.FromID, &x.ToKind, &x.ToID, &x.Type)
		snap.Relationships = append(snap.Relationships, x)
		return err
	}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, tx, "counters", "SELECT kind, last_id FROM counters WHERE account_id = ?", id,
		func(rows *sql.Rows) error {
			var kind string
			var last int64
			err := rows.Scan(&kind, &last)
			snap.Counters[kind] = last
			return err
		}); err != nil {
		return nil, err
	}
	return snap, nil
}

// eachRow runs a query with one argument and calls fn for every row.
func eachRow(ctx context.Context, tx *sql.Tx, what, query string, arg any, fn func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, query, arg)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
