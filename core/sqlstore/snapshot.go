package sqlstore

// Whole accounts as core.Snapshot, for `reqgate store copy`: an account moves between any two stores,
// SQLite or PostgreSQL, without translation.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reqgate/reqgate/core"
)

// APIKeys lists the api_keys of every account, sorted byte-wise.
func (s *Store) APIKeys(ctx context.Context) ([]string, error) {
	var keys []string
	err := each(ctx, s.db, "SELECT api_key FROM accounts ORDER BY api_key"+s.d.Bytewise, nil, func(rows Rows) error {
		var k string
		err := rows.Scan(&k)
		keys = append(keys, k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("api keys: %w", err)
	}
	return keys, nil
}

// Export reads one account in one read-only transaction, so the snapshot is consistent while the store keeps
// writing. core.ErrNotFound for an unknown api_key.
func (s *Store) Export(ctx context.Context, apiKey string) (*core.Snapshot, error) {
	var snap *core.Snapshot
	err := s.db.Snapshot(ctx, func(tx Tx) error {
		var err error
		snap, err = s.export(ctx, tx, apiKey)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("export account %q: %w", apiKey, err)
	}
	return snap, nil
}

func (s *Store) export(ctx context.Context, tx Tx, apiKey string) (*core.Snapshot, error) {
	snap := &core.Snapshot{APIKey: apiKey, Counters: map[string]int64{}}
	var id int64
	if err := tx.QueryRow(ctx, "SELECT id, name FROM accounts WHERE api_key = $1", apiKey).Scan(&id, &snap.Name); err != nil {
		return nil, notFound(err)
	}
	var err error
	if snap.Users, err = loadUsers(ctx, tx, id); err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	if snap.Objects, err = s.loadObjects(ctx, tx, id); err != nil {
		return nil, fmt.Errorf("objects: %w", err)
	}
	for _, o := range snap.Objects {
		fs, err := loadFields(ctx, tx, id, o.APIPrefix)
		if err != nil {
			return nil, fmt.Errorf("fields of %s: %w", o.APIPrefix, err)
		}
		snap.Fields = append(snap.Fields, fs...)
	}
	bw := s.d.Bytewise
	for _, t := range []struct {
		what, query string
		scan        func(Rows) error
	}{
		{"views", "SELECT id, kind, name, description, created_by, conditions FROM views WHERE account_id = $1 ORDER BY id",
			func(rows Rows) error {
				var v core.View
				err := rows.Scan(&v.ID, &v.Kind, &v.Name, &v.Description, &v.CreatedBy, &v.Conditions)
				snap.Views = append(snap.Views, v)
				return err
			}},
		{"records", "SELECT " + recordCols + " FROM records WHERE account_id = $1 ORDER BY kind" + bw + ", id",
			func(rows Rows) error {
				r, err := scanRecord(rows)
				snap.Records = append(snap.Records, r)
				return err
			}},
		{"history", `SELECT kind, record_id, seq, field_id, user_id, time, old, new FROM history WHERE account_id = $1
			ORDER BY kind` + bw + ", record_id, field_id, seq",
			func(rows Rows) error {
				var h core.HistoryEntry
				err := rows.Scan(&h.Kind, &h.RecordID, &h.Seq, &h.FieldID, &h.UserID, &h.Time, &h.Old, &h.New)
				snap.History = append(snap.History, h)
				return err
			}},
		{"relationships", `SELECT from_kind, from_id, to_kind, to_id, type FROM relationships WHERE account_id = $1
			ORDER BY from_kind` + bw + ", from_id, to_kind" + bw + ", to_id, type" + bw,
			func(rows Rows) error {
				var x core.StoredRelation
				err := rows.Scan(&x.FromKind, &x.FromID, &x.ToKind, &x.ToID, &x.Type)
				snap.Relationships = append(snap.Relationships, x)
				return err
			}},
		{"counters", "SELECT kind, last_id FROM counters WHERE account_id = $1",
			func(rows Rows) error {
				var kind string
				var last int64
				err := rows.Scan(&kind, &last)
				snap.Counters[kind] = last
				return err
			}},
	} {
		if err := each(ctx, tx, t.query, []any{id}, t.scan); err != nil {
			return nil, fmt.Errorf("%s: %w", t.what, err)
		}
	}
	return snap, nil
}

// accountTables are the tables holding an account's rows, children first (the order a replace deletes them).
// Receipts are not copied: they answer retries of writes made to this store, for a day.
var accountTables = []string{"receipts", "terms", "history", "relationships", "counters", "records", "views", "field_options",
	"fields", "objects", "users"}

// Import writes the account of snap in one transaction and rebuilds its search terms. An account with the
// same api_key is core.ErrConflict unless replace is set; then its rows are deleted first and its internal
// id is kept. Provisioning is held off meanwhile (the Apply lock), and with a cache, record writes too.
func (s *Store) Import(ctx context.Context, snap *core.Snapshot, replace bool) error {
	if snap == nil || snap.APIKey == "" {
		return fmt.Errorf("import: %w", core.Invalid("api_key", "empty"))
	}
	err := s.provisioning(func() error {
		return s.db.Write(ctx, func(tx Tx) error {
			if err := s.d.lock(ctx, tx, lockApply); err != nil {
				return err
			}
			var id int64
			err := tx.QueryRow(ctx, "SELECT id FROM accounts WHERE api_key = $1", snap.APIKey).Scan(&id)
			switch {
			case errors.Is(err, sql.ErrNoRows):
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
					if err := tx.Exec(ctx, "DELETE FROM "+t+" WHERE account_id = $1", id); err != nil {
						return fmt.Errorf("clear %s: %w", t, err)
					}
				}
				if err := tx.Exec(ctx, "UPDATE accounts SET name = $1 WHERE id = $2", snap.Name, id); err != nil {
					return fmt.Errorf("update account: %w", err)
				}
			}
			return importRows(ctx, tx, id, snap)
		})
	})
	if err != nil {
		return fmt.Errorf("import account %q: %w", snap.APIKey, err)
	}
	return nil
}

func importRows(ctx context.Context, tx Tx, id int64, snap *core.Snapshot) error {
	data, err := dataTables(id, snap)
	if err != nil {
		return err
	}
	progress := core.ProgressFunc(ctx)
	for _, t := range append(metaTables(id, snap), data...) {
		if err := t.copy(ctx, tx, progress); err != nil {
			return err
		}
	}
	for _, o := range snap.Objects {
		if err := reindexKind(ctx, tx, id, o.APIPrefix); err != nil {
			return err
		}
	}
	return nil
}

// importTable is the rows of one table an import writes.
type importTable struct {
	table string
	cols  []string
	rows  [][]any
}

// importChunk is how many rows one CopyRows call of an import writes: a large account's records arrive in
// several calls, each reported to the progress callback (core.WithProgress). Tests lower it.
var importChunk = 5000

// copy writes the rows in chunks; those of the records table count as progress.
func (t importTable) copy(ctx context.Context, tx Tx, progress func(int)) error {
	for rows := t.rows; len(rows) > 0; {
		n := min(importChunk, len(rows))
		if err := tx.CopyRows(ctx, t.table, t.cols, rows[:n]); err != nil {
			return fmt.Errorf("copy %s: %w", t.table, err)
		}
		if t.table == "records" {
			progress(n)
		}
		rows = rows[n:]
	}
	return nil
}

// metaTables are the rows of an account's users, objects, fields, field options and views.
func metaTables(id int64, snap *core.Snapshot) []importTable {
	var users, objects, fields, options, views [][]any
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
	return []importTable{
		{"users", []string{"account_id", "id", "username", "email", "first_name", "last_name", "status", "deleted",
			"password_hash"}, users},
		{"objects", []string{"account_id", "api_prefix", "unique_id", "name_singular", "name_plural", "description",
			"id_prefix", "custom"}, objects},
		{"fields", []string{"account_id", "id", "kind", "label", "type", "special_purpose", "required", "sort", "help",
			"default_value", "max_size", "list_type"}, fields},
		{"field_options", []string{"account_id", "field_id", "value", "label", "descr", "sort", "is_default"}, options},
		{"views", []string{"account_id", "id", "kind", "name", "description", "created_by", "conditions"}, views},
	}
}

// dataTables are the rows of an account's records, history, relationships and id counters.
func dataTables(id int64, snap *core.Snapshot) ([]importTable, error) {
	var records, history, rels, counters [][]any
	for _, r := range snap.Records {
		vals, err := encodeValues(r.Values)
		if err != nil {
			return nil, err
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
	return []importTable{
		{"records", []string{"account_id", "kind", "id", "version", "created_time", "created_by", "last_updated_time",
			"last_updated_by", "deleted_time", "version_comment", "vals"}, records},
		{"history", []string{"account_id", "kind", "record_id", "field_id", "seq", "user_id", "time", "old", "new"}, history},
		{"relationships", []string{"account_id", "from_kind", "from_id", "to_kind", "to_id", "type"}, rels},
		{"counters", []string{"account_id", "kind", "last_id"}, counters},
	}, nil
}
