package sqlite

// This file (added for `reqgate store copy`, issue 8) takes in whole accounts written out by Export, of
// this store or of core/postgres, so that an account can move back from PostgreSQL to a SQLite file.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/reqgate/reqgate/core"
)

var _ core.Importer = (*Store)(nil)

// accountTables are the tables holding an account's rows, children first (the order a replace deletes them).
var accountTables = []string{"terms", "history", "relationships", "counters", "records", "views", "field_options",
	"fields", "objects", "users"}

// Import writes the account of snap in one transaction and rebuilds its search terms. An account with the
// same api_key is core.ErrConflict unless replace is set; then its rows are deleted first and its internal
// id is kept.
func (s *Store) Import(ctx context.Context, snap *core.Snapshot, replace bool) error {
	if snap == nil || snap.APIKey == "" {
		return fmt.Errorf("import: %w", core.Invalid("api_key", "empty"))
	}
	// As Apply: no record writes meanwhile, and the cached account metadata is dropped afterwards.
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	defer s.cache.reset()
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM accounts WHERE api_key = ?", snap.APIKey).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if err := tx.QueryRowContext(ctx, "INSERT INTO accounts (api_key, name) VALUES (?, ?) RETURNING id",
				snap.APIKey, snap.Name).Scan(&id); err != nil {
				return fmt.Errorf("insert account: %w", err)
			}
		case err != nil:
			return err
		case !replace:
			return fmt.Errorf("the target already holds this account (replace it with --replace): %w", core.ErrConflict)
		default:
			for _, t := range accountTables {
				if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE account_id = ?", id); err != nil {
					return fmt.Errorf("clear %s: %w", t, err)
				}
			}
			if _, err := tx.ExecContext(ctx, "UPDATE accounts SET name = ? WHERE id = ?", snap.Name, id); err != nil {
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

// insertRows inserts rows of n columns into table with one prepared statement.
func insertRows(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES (?"+
		strings.Repeat(", ?", len(cols)-1)+")")
	if err != nil {
		return fmt.Errorf("insert %s: %w", table, err)
	}
	defer stmt.Close()
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r...); err != nil {
			return fmt.Errorf("insert %s: %w", table, err)
		}
	}
	return nil
}

func importRows(ctx context.Context, tx *sql.Tx, id int64, snap *core.Snapshot) error {
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
			f.Sort, f.Help, f.DefaultValue, f.MaxSize, f.ListType})
		for _, o := range f.Options {
			options = append(options, []any{id, f.ID, o.Value, o.Label, o.Desc, o.Sort, o.Default})
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
		if err := insertRows(ctx, tx, c.table, c.cols, c.rows); err != nil {
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
