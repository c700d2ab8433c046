package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
)

const summaryCols = "r.kind, r.id, r.version, r.created_time, r.last_updated_time, r.created_by, r.last_updated_by"

func scanSummary(sc Row, extra ...any) (core.Summary, error) {
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

// params collects the arguments of a query and names them $1, $2, ...
type params []any

func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
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
	fewest := -1 // hits of the most selective field condition, when counted
	if s.d.PlanHints {
		if conds, fewest, err = bySelectivity(ctx, s.db, accountID, kind, types, conds); err != nil {
			return nil, err
		}
	}
	// narrow: a field condition matches fewer than estimateCap records. Its rids then drive the search (at
	// most estimateCap lookups, whatever else is asked), and the indexes of records are kept out of the plan:
	// without statistics SQLite would rather walk an index in id order over the whole kind.
	narrow := fewest >= 0 && fewest < estimateCap
	var args params
	title, account, kindArg := args.add(ki.titleKey), args.add(accountID), args.add(kind)
	var where strings.Builder
	deleted, listed := false, false
	for _, c := range conds {
		switch c.Attr {
		case "created_time", "last_updated_time", "deleted_time":
			fmt.Fprintf(&where, " AND r.%s %c %s", c.Attr, c.Op, args.add(c.Int))
			deleted = deleted || c.Attr == "deleted_time"
		case "created_by", "last_updated_by":
			fmt.Fprintf(&where, " AND r.%s = %s", c.Attr, args.add(c.Int))
		default:
			term := fmt.Sprintf("t.account_id = %s AND t.kind = %s AND t.field_id = %s AND t.term = %s",
				account, kindArg, args.add(c.FieldID), args.add(core.SearchTerm(types[c.FieldID], c)))
			switch {
			case !listed && narrow:
				// The most selective field condition drives the search through the rids of its hits.
				where.WriteString(" AND r.rid IN (SELECT t.rid FROM terms t WHERE " + term + ")")
			case !listed:
				// A broad one: a list of ids, which the database may drive from or check against the index
				// it picks for the other conditions.
				where.WriteString(" AND r.id IN (SELECT t.record_id FROM terms t WHERE " + term + ")")
			default:
				// Further ones are point lookups per candidate: building their lists could cost far more.
				where.WriteString(" AND EXISTS (SELECT 1 FROM terms t WHERE " + term + " AND t.record_id = r.id)")
			}
			listed = true
		}
	}
	if deleted {
		where.WriteString(" AND r.deleted_time > 0")
	} else {
		where.WriteString(" AND r.deleted_time = 0")
	}
	from := "records r"
	if narrow {
		from = "records r" + s.d.NotIndexed
	}
	q := "SELECT " + summaryCols + ", COALESCE(r.vals ->> CAST(" + title + " AS TEXT), '') FROM " + from +
		" WHERE r.account_id = " + account + " AND r.kind = " + kindArg + where.String() + " ORDER BY r.id"
	out := []core.Summary{}
	err = each(ctx, s.db, q, args, func(rows Rows) error {
		m, err := scanSummary(rows)
		out = append(out, m)
		return err
	})
	return out, err
}

// estimateCap bounds the work of estimating how many records a field condition matches.
const estimateCap = 2000

// bySelectivity returns conds with the field conditions ordered by how many records they match (counted up to
// estimateCap), fewest first, so the list that drives the search is the shortest one; and that count for the
// first of them (-1 without field conditions).
func bySelectivity(ctx context.Context, q Querier, accountID int64, kind string, types map[int64]core.FieldType,
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
	count := make([]int, len(fields))
	for i, c := range fields {
		if err := q.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM terms WHERE account_id = $1 AND kind = $2
			AND field_id = $3 AND term = $4 LIMIT $5) x`, accountID, kind, c.FieldID, core.SearchTerm(types[c.FieldID], c),
			estimateCap).Scan(&count[i]); err != nil {
			return nil, 0, err
		}
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

// titleOf is the SQL expression of the title of record r: the value of its kind's title field.
const titleOf = `COALESCE(r.vals ->> CAST((SELECT f.id FROM fields f WHERE f.account_id = r.account_id
	AND f.kind = r.kind AND f.special_purpose = 'title' ORDER BY f.sort, f.id LIMIT 1) AS TEXT), '')`

// Related returns the live records related to a live record, with the direction seen from it, ordered by kind
// (re, ft, uc, then custom kinds by api_prefix) and id.
func (s *Store) Related(ctx context.Context, accountID int64, kind string, id int64) ([]core.Relation, error) {
	var deleted int64
	err := s.db.QueryRow(ctx, "SELECT deleted_time FROM records WHERE account_id = $1 AND kind = $2 AND id = $3",
		accountID, kind, id).Scan(&deleted)
	if err == nil && deleted != 0 {
		err = core.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("related of %s %d: %w", kind, id, notFound(err))
	}
	out := []core.Relation{}
	err = each(ctx, s.db, `SELECT x.type, `+summaryCols+`, `+titleOf+` FROM (
		SELECT CASE type WHEN 'parent' THEN CAST($1 AS TEXT) ELSE CAST($2 AS TEXT) END AS type, to_kind AS kind, to_id AS id
			FROM relationships WHERE account_id = $5 AND from_kind = $6 AND from_id = $7
		UNION ALL
		SELECT CASE type WHEN 'parent' THEN CAST($3 AS TEXT) ELSE CAST($4 AS TEXT) END, from_kind, from_id
			FROM relationships WHERE account_id = $5 AND to_kind = $6 AND to_id = $7
		) x JOIN records r ON r.account_id = $5 AND r.kind = x.kind AND r.id = x.id
		WHERE r.deleted_time = 0
		ORDER BY `+s.kindOrder("r.kind")+`, r.id, x.type`+s.d.Bytewise,
		[]any{core.RelParentOf, core.RelRelatedTo, core.RelChildOf, core.RelRelatedTo, accountID, kind, id},
		func(rows Rows) error {
			var rel core.Relation
			var err error
			rel.Summary, err = scanSummary(rows, &rel.Type)
			out = append(out, rel)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("related of %s %d: %w", kind, id, err)
	}
	return out, nil
}
