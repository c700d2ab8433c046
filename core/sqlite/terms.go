package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/reqgate/reqgate/core"
)

// The terms table makes field conditions index lookups; core.SearchTerms says which terms a value gives.

// searchableFields returns the types of the searchable fields of a kind, by field id.
func searchableFields(ctx context.Context, q rowQuerier, accountID int64, kind string) (map[int64]core.FieldType, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, type FROM fields WHERE account_id = ? AND kind = ?
		AND type IN (?, ?, ?)`, accountID, kind, core.TypePickOne, core.TypePickMultiple, core.TypeTextbox)
	if err != nil {
		return nil, fmt.Errorf("searchable fields: %w", err)
	}
	defer rows.Close()
	out := map[int64]core.FieldType{}
	for rows.Next() {
		var id int64
		var t core.FieldType
		if err := rows.Scan(&id, &t); err != nil {
			return nil, fmt.Errorf("searchable fields: %w", err)
		}
		out[id] = t
	}
	return out, rows.Err()
}

// reindex rewrites the terms of the searchable fields (types) whose value differs between old and new (old
// nil: a new record). The old terms are computed from the old values, so every delete is a primary-key one.
func reindex(ctx context.Context, tx execer, accountID int64, kind string, id, rid int64,
	types map[int64]core.FieldType, old, new map[int64]string) error {
	var args []any
	for fid, t := range types {
		if old[fid] == new[fid] {
			continue
		}
		for _, term := range core.SearchTerms(t, old[fid]) {
			if _, err := tx.ExecContext(ctx, qDeleteTerm, accountID, kind, fid, term, id); err != nil {
				return fmt.Errorf("reindex: %w", err)
			}
		}
		for _, term := range core.SearchTerms(t, new[fid]) {
			args = append(args, accountID, kind, fid, term, id, rid)
		}
	}
	// Few statements for the new terms (every statement costs a step, an unprepared one a prepare too), in
	// chunks that stay far below SQLite's limit on bound variables.
	const chunk = 200 * 6
	for len(args) > 0 {
		n := min(len(args), chunk)
		if _, err := tx.ExecContext(ctx, qInsertTerms(n/6), args[:n]...); err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
		args = args[n:]
	}
	return nil
}

// reindexKind rebuilds the terms of every record of a kind (after its field definitions changed type).
func reindexKind(ctx context.Context, tx *sql.Tx, accountID int64, kind string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM terms WHERE account_id = ? AND kind = ?", accountID, kind); err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	types, err := searchableFields(ctx, tx, accountID, kind)
	if err != nil || len(types) == 0 {
		return err
	}
	rows, err := tx.QueryContext(ctx, "SELECT rid, id, vals FROM records WHERE account_id = ? AND kind = ?", accountID, kind)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	type row struct {
		rid, id int64
		vals    map[int64]string
	}
	var all []row
	for rows.Next() {
		var r row
		var s string
		if err := rows.Scan(&r.rid, &r.id, &s); err != nil {
			rows.Close()
			return fmt.Errorf("reindex %s: %w", kind, err)
		}
		if r.vals, err = decodeValues(s); err != nil {
			rows.Close()
			return fmt.Errorf("reindex %s: %w", kind, err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	for _, r := range all {
		if err := reindex(ctx, tx, accountID, kind, r.id, r.rid, types, nil, r.vals); err != nil {
			return fmt.Errorf("reindex %s: %w", kind, err)
		}
	}
	return nil
}
