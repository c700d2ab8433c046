package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core"
)

var (
	_ core.Exporter = (*Store)(nil)
	_ core.Importer = (*Store)(nil)
)

// APIKeys lists the api_keys of every account, sorted byte-wise.
func (s *Store) APIKeys(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT api_key FROM accounts ORDER BY api_key COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	return keys, nil
}

// Export reads one account in one REPEATABLE READ transaction, so the snapshot is consistent even while
// replicas keep writing.
func (s *Store) Export(ctx context.Context, apiKey string) (*core.Snapshot, error) {
	var snap *core.Snapshot
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			var err error
			snap, err = export(ctx, tx, apiKey)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("export account %q: %w", apiKey, err)
	}
	return snap, nil
}

func export(ctx context.Context, tx pgx.Tx, apiKey string) (*core.Snapshot, error) {
	snap := &core.Snapshot{APIKey: apiKey, Counters: map[string]int64{}}
	var id int64
	if err := tx.QueryRow(ctx, "SELECT id, name FROM accounts WHERE api_key = $1", apiKey).Scan(&id, &snap.Name); err != nil {
		return nil, notFound(err)
	}
	var err error
	if snap.Users, err = loadUsers(ctx, tx, id); err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	if snap.Objects, err = loadObjects(ctx, tx, id); err != nil {
		return nil, fmt.Errorf("objects: %w", err)
	}
	for _, o := range snap.Objects {
		fs, err := loadFields(ctx, tx, id, o.APIPrefix)
		if err != nil {
			return nil, fmt.Errorf("fields of %s: %w", o.APIPrefix, err)
		}
		snap.Fields = append(snap.Fields, fs...)
	}
	rows, err := tx.Query(ctx, `SELECT id, kind, name, description, created_by, conditions FROM views
		WHERE account_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("views: %w", err)
	}
	snap.Views, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (core.View, error) {
		var v core.View
		err := r.Scan(&v.ID, &v.Kind, &v.Name, &v.Description, &v.CreatedBy, &v.Conditions)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("views: %w", err)
	}
	rows, err = tx.Query(ctx, "SELECT "+recordCols+` FROM records WHERE account_id = $1 ORDER BY kind COLLATE "C", id`, id)
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	snap.Records, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (core.Record, error) { return scanRecord(r) })
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	rows, err = tx.Query(ctx, `SELECT kind, record_id, seq, field_id, user_id, time, old, new FROM history
		WHERE account_id = $1 ORDER BY kind COLLATE "C", record_id, field_id, seq`, id)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	snap.History, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (core.HistoryEntry, error) {
		var h core.HistoryEntry
		err := r.Scan(&h.Kind, &h.RecordID, &h.Seq, &h.FieldID, &h.UserID, &h.Time, &h.Old, &h.New)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	rows, err = tx.Query(ctx, `SELECT from_kind, from_id, to_kind, to_id, type FROM relationships
		WHERE account_id = $1 ORDER BY from_kind COLLATE "C", from_id, to_kind COLLATE "C", to_id, type COLLATE "C"`, id)
	if err != nil {
		return nil, fmt.Errorf("relationships: %w", err)
	}
	snap.Relationships, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (core.StoredRelation, error) {
		var x core.StoredRelation
		err := r.Scan(&x.FromKind, &x.FromID, &x.ToKind, &x.ToID, &x.Type)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("relationships: %w", err)
	}
	rows, err = tx.Query(ctx, "SELECT kind, last_id FROM counters WHERE account_id = $1", id)
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var last int64
		if err := rows.Scan(&kind, &last); err != nil {
			return nil, fmt.Errorf("counters: %w", err)
		}
		snap.Counters[kind] = last
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	return snap, nil
}

// accountTables are the tables holding an account's rows, children first (the order a replace deletes them).
var accountTables = []string{"terms", "history", "relationships", "counters", "records", "views", "field_options",
	"fields", "objects", "users"}

// Import writes the account of snap in one transaction (COPY for the bulk rows) and rebuilds its search
// terms. An account with the same api_key is core.ErrConflict unless replace is set; then its rows are
// deleted first and its internal id is kept. Provisioning is held off (advisory lock) meanwhile.
func (s *Store) Import(ctx context.Context, snap *core.Snapshot, replace bool) error {
	if snap == nil || snap.APIKey == "" {
		return fmt.Errorf("import: %w", core.Invalid("api_key", "empty"))
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockApply); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var id int64
		err := tx.QueryRow(ctx, "SELECT id FROM accounts WHERE api_key = $1", snap.APIKey).Scan(&id)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if err := tx.QueryRow(ctx, "INSERT INTO accounts (api_key, name) VALUES ($1, $2) RETURNING id",
				snap.APIKey, snap.Name).Scan(&id); err != nil {
				return fmt.Errorf("insert account: %w", err)
			}
		case err != nil:
			return err
		case !replace:
			return fmt.Errorf("the target already holds this account (replace it with --replace): %w", core.ErrConflict)
		default:
			for _, t := range accountTables {
				if _, err := tx.Exec(ctx, "DELETE FROM "+t+" WHERE account_id = $1", id); err != nil {
					return fmt.Errorf("clear %s: %w", t, err)
				}
			}
			if _, err := tx.Exec(ctx, "UPDATE accounts SET name = $1 WHERE id = $2", snap.Name, id); err != nil {
				return fmt.Errorf("update account: %w", err)
			}
		}
		return importRows(ctx, tx, id, snap)
	})
	if err != nil {
		return fmt.Errorf("import account %q: %w", snap.APIKey, err)
	}
	return nil
}

func importRows(ctx context.Context, tx pgx.Tx, id int64, snap *core.Snapshot) error {
	var users, objects, fields, options, views, records, history, rels, counters [][]any
	for _, u := range snap.Users {
		var hash any
		if len(u.PasswordHash) > 0 {
			hash = u.PasswordHash
		}
		users = append(users, []any{id, u.ID, u.Username, u.Email, u.FirstName, u.LastName, u.Status, u.Deleted, hash})
	}
	for _, o := range snap.Objects {
		uid := o.UniqueID
		if uid == "" {
			uid = core.ObjectUniqueID(snap.APIKey, o.APIPrefix)
		}
		objects = append(objects, []any{id, o.APIPrefix, uid, o.NameSingular, o.NamePlural, o.Description,
			o.IDPrefix, o.Custom})
	}
	for _, f := range snap.Fields {
		fields = append(fields, []any{id, f.ID, f.Kind, f.Label, string(f.Type), f.SpecialPurpose, f.Required,
			int64(f.Sort), f.Help, f.DefaultValue, int64(f.MaxSize), f.ListType})
		for _, o := range f.Options {
			options = append(options, []any{id, f.ID, o.Value, o.Label, o.Desc, int64(o.Sort), o.Default})
		}
	}
	for _, v := range snap.Views {
		views = append(views, []any{id, v.ID, v.Kind, v.Name, v.Description, v.CreatedBy, v.Conditions})
	}
	for _, r := range snap.Records {
		vals, err := encodeValues(r.Values)
		if err != nil {
			return err
		}
		records = append(records, []any{id, r.Kind, r.ID, r.Version, r.CreatedTime, r.CreatedBy, r.LastUpdatedTime,
			r.LastUpdatedBy, r.DeletedTime, r.VersionComment, vals})
	}
	for _, h := range snap.History {
		history = append(history, []any{id, h.Kind, h.RecordID, h.FieldID, h.Seq, h.UserID, h.Time, h.Old, h.New})
	}
	for _, x := range snap.Relationships {
		rels = append(rels, []any{id, x.FromKind, x.FromID, x.ToKind, x.ToID, x.Type})
	}
	for kind, last := range snap.Counters {
		counters = append(counters, []any{id, kind, last})
	}
	for _, c := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"users", []string{"account_id", "id", "username", "email", "first_name", "last_name", "status", "deleted",
			"password_hash"}, users},
		{"objects", []string{"account_id", "api_prefix", "unique_id", "name_singular", "name_plural", "description",
			"id_prefix", "custom"}, objects},
		{"fields", []string{"account_id", "id", "kind", "label", "type", "special_purpose", "required", "sort", "help",
			"default_value", "max_size", "list_type"}, fields},
		{"field_options", []string{"account_id", "field_id", "value", "label", "descr", "sort", "is_default"}, options},
		{"views", []string{"account_id", "id", "kind", "name", "description", "created_by", "conditions"}, views},
		{"records", []string{"account_id", "kind", "id", "version", "created_time", "created_by", "last_updated_time",
			"last_updated_by", "deleted_time", "version_comment", "vals"}, records},
		{"history", []string{"account_id", "kind", "record_id", "field_id", "seq", "user_id", "time", "old", "new"}, history},
		{"relationships", []string{"account_id", "from_kind", "from_id", "to_kind", "to_id", "type"}, rels},
		{"counters", []string{"account_id", "kind", "last_id"}, counters},
	} {
		if len(c.rows) == 0 {
			continue
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			return fmt.Errorf("copy %s: %w", c.table, err)
		}
	}
	for _, o := range snap.Objects {
		if err := reindexKind(ctx, tx, id, o.APIPrefix); err != nil {
			return err
		}
	}
	return nil
}
