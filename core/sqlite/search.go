package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/reqgate/reqgate/core"
)

const summaryCols = "r.kind, r.id, r.version, r.created_time, r.last_updated_time, r.created_by, r.last_updated_by"

func scanSummary(sc interface{ Scan(...any) error }, extra ...any) (core.Summary, error) {
	var m core.Summary
	dest := append(extra, &m.Kind, &m.ID, &m.Version, &m.CreatedTime, &m.LastUpdatedTime, &m.CreatedBy,
		&m.LastUpdatedBy, &m.Title)
	err := sc.Scan(dest...)
	return m, err
}

// Search returns summaries of the records of a kind matching every condition, ordered by id. Without a
// deleted_time condition only live records match; with one, only deleted ones. Each condition is answered by
// an index: the time and user columns have their own, field conditions go through the terms table.
func (s *Store) Search(ctx context.Context, accountID int64, kind string, conds []core.Condition) ([]core.Summary, error) {
	out, err := s.search(ctx, accountID, kind, conds)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", kind, err)
	}
	return out, nil
}

func (s *Store) search(ctx context.Context, accountID int64, kind string, conds []core.Condition) ([]core.Summary, error) {
	ki, err := s.kindInfo(ctx, accountID, kind)
	if err != nil {
		return nil, err
	}
	types := ki.searchable
	if err := core.CheckSearch(kind, conds, types); err != nil {
		return nil, err
	}
	conds, fewest, err := bySelectivity(ctx, s.r, accountID, kind, types, conds)
	if err != nil {
		return nil, err
	}
	// narrow: a field condition matches fewer than estimateCap records. Its rowids then drive the search
	// (at most estimateCap lookups, whatever else is asked), and the indexes of records are kept out of the
	// plan: without statistics SQLite would rather walk an index in id order over the whole kind.
	narrow := fewest >= 0 && fewest < estimateCap
	var where strings.Builder
	args := []any{ki.titlePath, accountID, kind}
	deleted, listed := false, false
	for _, c := range conds {
		switch c.Attr {
		case "created_time", "last_updated_time", "deleted_time":
			fmt.Fprintf(&where, " AND r.%s %c ?", c.Attr, c.Op)
			args = append(args, c.Int)
			deleted = deleted || c.Attr == "deleted_time"
		case "created_by", "last_updated_by":
			where.WriteString(" AND r." + c.Attr + " = ?")
			args = append(args, c.Int)
		default:
			t := types[c.FieldID]
			switch {
			case !listed && narrow:
				// The most selective field condition drives the search through the rowids of its hits.
				where.WriteString(` AND r.rid IN (SELECT t.rid FROM terms t WHERE t.account_id = ?
					AND t.kind = ? AND t.field_id = ? AND t.term = ?)`)
				listed = true
			case !listed:
				// A broad one: a list of ids, which SQLite may drive from or check against the index it
				// picks for the other conditions.
				where.WriteString(` AND r.id IN (SELECT t.record_id FROM terms t WHERE t.account_id = ?
					AND t.kind = ? AND t.field_id = ? AND t.term = ?)`)
				listed = true
			default:
				// Further ones are point lookups per candidate: building their lists could cost far more.
				where.WriteString(` AND EXISTS (SELECT 1 FROM terms t WHERE t.account_id = ? AND t.kind = ?
					AND t.field_id = ? AND t.term = ? AND t.record_id = r.id)`)
			}
			args = append(args, accountID, kind, c.FieldID, core.SearchTerm(t, c))
		}
	}
	if deleted {
		where.WriteString(" AND r.deleted_time > 0")
	} else {
		where.WriteString(" AND r.deleted_time = 0")
	}
	from := "records r"
	if narrow {
		from = "records r NOT INDEXED"
	}
	q := "SELECT " + summaryCols + ", COALESCE(json_extract(r.vals, ?), '') FROM " + from +
		" WHERE r.account_id = ? AND r.kind = ?" + where.String() + " ORDER BY r.id"
	return querySummaries(ctx, s.r, q, args...)
}

// estimateCap bounds the work of estimating how many records a field condition matches.
const estimateCap = 2000

// bySelectivity returns conds with the field conditions ordered by how many records they match (counted up to
// estimateCap), fewest first, so the list that drives the search is the shortest one; and that count for the
// first of them (-1 without field conditions).
func bySelectivity(ctx context.Context, db *sql.DB, accountID int64, kind string, types map[int64]core.FieldType,
	conds []core.Condition) ([]core.Condition, int, error) {
	var fields, rest []core.Condition
	for _, c := range conds {
		if strings.HasPrefix(c.Attr, "field_") {
			fields = append(fields, c)
		} else {
			rest = append(rest, c)
		}
	}
	if len(fields) == 0 {
		return conds, -1, nil
	}
	count := make(map[int]int, len(fields))
	for i, c := range fields {
		t := types[c.FieldID]
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM terms WHERE account_id = ? AND kind = ?
			AND field_id = ? AND term = ? LIMIT ?)`, accountID, kind, c.FieldID, core.SearchTerm(t, c), estimateCap).Scan(&n); err != nil {
			return nil, 0, err
		}
		count[i] = n
	}
	idx := make([]int, len(fields))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return count[a] - count[b] })
	for _, i := range idx {
		rest = append(rest, fields[i])
	}
	return rest, count[idx[0]], nil
}

func querySummaries(ctx context.Context, db *sql.DB, q string, args ...any) ([]core.Summary, error) {
	rows, err := db.QueryContext(ctx, q, args...)
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
const titleOf = `COALESCE(json_extract(r.vals, '$."' || (SELECT f.id FROM fields f WHERE f.account_id = r.account_id
	AND f.kind = r.kind AND f.special_purpose = 'title' ORDER BY f.sort, f.id LIMIT 1) || '"'), '')`

// Related returns the live records related to a live record, with the direction seen from it, ordered by kind
// (re, ft, uc, then custom kinds by api_prefix) and id.
func (s *Store) Related(ctx context.Context, accountID int64, kind string, id int64) ([]core.Relation, error) {
	var deleted int64
	err := s.r.QueryRowContext(ctx, "SELECT deleted_time FROM records WHERE account_id = ? AND kind = ? AND id = ?",
		accountID, kind, id).Scan(&deleted)
	if err == nil && deleted != 0 {
		err = core.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("related of %s %d: %w", kind, id, notFound(err))
	}
	rows, err := s.r.QueryContext(ctx, `SELECT x.type, `+summaryCols+`, `+titleOf+` FROM (
		SELECT CASE type WHEN 'parent' THEN ? ELSE ? END AS type, to_kind AS kind, to_id AS id
			FROM relationships WHERE account_id = ? AND from_kind = ? AND from_id = ?
		UNION ALL
		SELECT CASE type WHEN 'parent' THEN ? ELSE ? END, from_kind, from_id
			FROM relationships WHERE account_id = ? AND to_kind = ? AND to_id = ?
		) x JOIN records r ON r.account_id = ? AND r.kind = x.kind AND r.id = x.id
		WHERE r.deleted_time = 0
		ORDER BY `+fmt.Sprintf(kindOrder, "r.kind")+`, r.id, x.type`,
		core.RelParentOf, core.RelRelatedTo, accountID, kind, id,
		core.RelChildOf, core.RelRelatedTo, accountID, kind, id,
		accountID)
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
