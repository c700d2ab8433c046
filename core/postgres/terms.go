package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core"
)

// The terms table makes field conditions index lookups; core.SearchTerms says which terms a value gives.

const searchableFieldsSQL = `SELECT id, type FROM fields WHERE account_id = $1 AND kind = $2 AND type IN ($3, $4, $5)`

// searchableFields returns the types of the searchable fields of a kind, by field id.
func searchableFields(ctx context.Context, q querier, accountID int64, kind string) (map[int64]core.FieldType, error) {
	rows, err := q.Query(ctx, searchableFieldsSQL, accountID, kind,
		string(core.TypePickOne), string(core.TypePickMultiple), string(core.TypeTextbox))
	if err != nil {
		return nil, fmt.Errorf("searchable fields: %w", err)
	}
	return collectSearchable(rows)
}

// queueSearchableFields queues the query of searchableFields in a batch; readSearchableFields reads it.
func queueSearchableFields(b *pgx.Batch, accountID int64, kind string) {
	b.Queue(searchableFieldsSQL, accountID, kind,
		string(core.TypePickOne), string(core.TypePickMultiple), string(core.TypeTextbox))
}

func readSearchableFields(br pgx.BatchResults) (map[int64]core.FieldType, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("searchable fields: %w", err)
	}
	return collectSearchable(rows)
}

func collectSearchable(rows pgx.Rows) (map[int64]core.FieldType, error) {
	defer rows.Close()
	out := map[int64]core.FieldType{}
	for rows.Next() {
		var id int64
		var t string
		if err := rows.Scan(&id, &t); err != nil {
			return nil, fmt.Errorf("searchable fields: %w", err)
		}
		out[id] = core.FieldType(t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searchable fields: %w", err)
	}
	return out, nil
}

// queueReindex queues the statements that rewrite the terms of the searchable fields whose value differs
// between old and new (old nil: a new record).
func queueReindex(b *pgx.Batch, types map[int64]core.FieldType, accountID int64, kind string, id int64, old, new map[int64]string) {
	for fid, t := range types {
		if old[fid] == new[fid] {
			continue
		}
		if old != nil {
			b.Queue(`DELETE FROM terms WHERE account_id = $1 AND kind = $2 AND record_id = $3 AND field_id = $4`,
				accountID, kind, id, fid)
		}
		for _, term := range core.SearchTerms(t, new[fid]) {
			b.Queue(`INSERT INTO terms (account_id, kind, field_id, term, record_id) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT DO NOTHING`, accountID, kind, fid, term, id)
		}
	}
}

// reindex rewrites the terms of the searchable fields whose value differs between old and new (old nil: a new
// record).
func reindex(ctx context.Context, tx pgx.Tx, accountID int64, kind string, id int64, old, new map[int64]string) error {
	types, err := searchableFields(ctx, tx, accountID, kind)
	if err != nil {
		return err
	}
	for fid, t := range types {
		if old[fid] == new[fid] {
			continue
		}
		if old != nil {
			if _, err := tx.Exec(ctx, `DELETE FROM terms WHERE account_id = $1 AND kind = $2 AND record_id = $3
				AND field_id = $4`, accountID, kind, id, fid); err != nil {
				return fmt.Errorf("reindex: %w", err)
			}
		}
		for _, term := range core.SearchTerms(t, new[fid]) {
			if _, err := tx.Exec(ctx, `INSERT INTO terms (account_id, kind, field_id, term, record_id)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, accountID, kind, fid, term, id); err != nil {
				return fmt.Errorf("reindex: %w", err)
			}
		}
	}
	return nil
}

// reindexKind rebuilds the terms of every record of a kind (after its field definitions changed type, or
// after an import).
func reindexKind(ctx context.Context, tx pgx.Tx, accountID int64, kind string) error {
	if _, err := tx.Exec(ctx, "DELETE FROM terms WHERE account_id = $1 AND kind = $2", accountID, kind); err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	types, err := searchableFields(ctx, tx, accountID, kind)
	if err != nil || len(types) == 0 {
		return err
	}
	rows, err := tx.Query(ctx, "SELECT id, vals::text FROM records WHERE account_id = $1 AND kind = $2", accountID, kind)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	var all [][]any
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			rows.Close()
			return fmt.Errorf("reindex %s: %w", kind, err)
		}
		vals, err := decodeValues(s)
		if err != nil {
			rows.Close()
			return fmt.Errorf("reindex %s: %w", kind, err)
		}
		for fid, t := range types {
			seen := map[string]bool{}
			for _, term := range core.SearchTerms(t, vals[fid]) {
				if !seen[term] {
					seen[term] = true
					all = append(all, []any{accountID, kind, fid, term, id})
				}
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"terms"}, []string{"account_id", "kind", "field_id", "term", "record_id"},
		pgx.CopyFromRows(all)); err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	return nil
}
