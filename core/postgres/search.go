package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core"
)

const summaryCols = "r.kind, r.id, r.version, r.created_time, r.last_updated_time, r.created_by, r.last_updated_by"

func scanSummary(sc pgx.Row, extra ...any) (core.Summary, error) {
	var m core.Summary
	dest := append(extra, &m.Kind, &m.ID, &m.Version, &m.CreatedTime, &m.LastUpdatedTime, &m.CreatedBy,
		&m.LastUpdatedBy, &m.Title)
	err := sc.Scan(dest...)
	return m, err
}

// Search returns summaries of the records of a kind matching every condition, ordered by id. Without a
// deleted_time condition only live records match; with one, only deleted ones. Field conditions go through
// the terms table, as in core/sqlite.
func (s *Store) Search(ctx context.Context, accountID int64, kind string, conds []core.Condition) ([]core.Summary, error) {
	out, err := s.search(ctx, accountID, kind, conds)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", kind, err)
	}
	return out, nil
}

func (s *Store) search(ctx context.Context, accountID int64, kind string, conds []core.Condition) ([]core.Summary, error) {
	ok, err := kindExists(ctx, s.pool, accountID, kind)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, core.ErrNotFound
	}
	types := map[int64]core.FieldType{}
	var titleKey any // key of the title value in vals; NULL (no title) when the kind has no title field
	rows, err := s.pool.Query(ctx, `SELECT id, type, special_purpose FROM fields WHERE account_id = $1 AND kind = $2
		ORDER BY sort, id`, accountID, kind)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var t, sp string
		if err := rows.Scan(&id, &t, &sp); err != nil {
			rows.Close()
			return nil, err
		}
		types[id] = core.FieldType(t)
		if sp == "title" && titleKey == nil {
			titleKey = strconv.FormatInt(id, 10)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := core.CheckSearch(kind, conds, types); err != nil {
		return nil, err
	}

	args := []any{titleKey, accountID, kind}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var where strings.Builder
	deleted := false
	for _, c := range conds {
		switch c.Attr {
		case "created_time", "last_updated_time", "deleted_time":
			fmt.Fprintf(&where, " AND r.%s %c %s", c.Attr, c.Op, arg(c.Int))
			deleted = deleted || c.Attr == "deleted_time"
		case "created_by", "last_updated_by":
			where.WriteString(" AND r." + c.Attr + " = " + arg(c.Int))
		default:
			t := types[c.FieldID]
			fmt.Fprintf(&where, ` AND r.id IN (SELECT t.record_id FROM terms t WHERE t.account_id = $2
				AND t.kind = $3 AND t.field_id = %s AND t.term = %s)`, arg(c.FieldID), arg(core.SearchTerm(t, c)))
		}
	}
	if deleted {
		where.WriteString(" AND r.deleted_time > 0")
	} else {
		where.WriteString(" AND r.deleted_time = 0")
	}
	q := "SELECT " + summaryCols + ", COALESCE(r.vals ->> $1::text, '') FROM records r" +
		" WHERE r.account_id = $2 AND r.kind = $3" + where.String() + " ORDER BY r.id"
	return querySummaries(ctx, s.pool, q, args...)
}

func querySummaries(ctx context.Context, q querier, sql string, args ...any) ([]core.Summary, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []core.Summary{}
	for rows.Next() {
		m, err := scanSummary(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// titleOf is the SQL expression of the title of record r: the value of its kind's title field.
const titleOf = `COALESCE(r.vals ->> (SELECT f.id::text FROM fields f WHERE f.account_id = r.account_id
	AND f.kind = r.kind AND f.special_purpose = 'title' ORDER BY f.sort, f.id LIMIT 1), '')`

// Related returns the live records related to a live record, with the direction seen from it, ordered by kind
// (re, ft, uc, then custom kinds by api_prefix) and id.
func (s *Store) Related(ctx context.Context, accountID int64, kind string, id int64) ([]core.Relation, error) {
	var deleted int64
	err := s.pool.QueryRow(ctx, "SELECT deleted_time FROM records WHERE account_id = $1 AND kind = $2 AND id = $3",
		accountID, kind, id).Scan(&deleted)
	if err == nil && deleted != 0 {
		err = core.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("related of %s %d: %w", kind, id, notFound(err))
	}
	rows, err := s.pool.Query(ctx, `SELECT x.type, `+summaryCols+`, `+titleOf+` FROM (
		SELECT CASE type WHEN 'parent' THEN $1::text ELSE $2::text END AS type, to_kind AS kind, to_id AS id
			FROM relationships WHERE account_id = $5 AND from_kind = $6 AND from_id = $7
		UNION ALL
		SELECT CASE type WHEN 'parent' THEN $3::text ELSE $4::text END, from_kind, from_id
			FROM relationships WHERE account_id = $5 AND to_kind = $6 AND to_id = $7
		) x JOIN records r ON r.account_id = $5 AND r.kind = x.kind AND r.id = x.id
		WHERE r.deleted_time = 0
		ORDER BY `+fmt.Sprintf(kindOrder, "r.kind")+`, r.id, x.type COLLATE "C"`,
		core.RelParentOf, core.RelRelatedTo, core.RelChildOf, core.RelRelatedTo, accountID, kind, id)
	if err != nil {
		return nil, fmt.Errorf("related of %s %d: %w", kind, id, err)
	}
	defer rows.Close()
	out := []core.Relation{}
	for rows.Next() {
		var rel core.Relation
		if rel.Summary, err = scanSummary(rows, &rel.Type); err != nil {
			return nil, fmt.Errorf("related of %s %d: %w", kind, id, err)
		}
		out = append(out, rel)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("related of %s %d: %w", kind, id, err)
	}
	return out, nil
}
