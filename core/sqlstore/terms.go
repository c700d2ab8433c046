package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// The terms table makes field conditions index lookups; core.SearchTerms says which terms a value gives. A term
// row also holds the rid of its record, so that a search driven by terms reaches the record in one index
// search (see search).

const (
	qSearchable = `SELECT id, type FROM fields WHERE account_id = $1 AND kind = $2 AND type IN ($3, $4, $5)`
	// qDeleteTerm deletes one term by its primary key: the old terms follow from the old values.
	qDeleteTerm = `DELETE FROM terms WHERE account_id = $1 AND kind = $2 AND field_id = $3 AND term = $4 AND record_id = $5`
)

// preparedTerms is how many terms the prepared forms of the terms insert take (1..preparedTerms).
const preparedTerms = 8

// maxTerms bounds the terms of one insert, far below the bound variables SQLite allows.
const maxTerms = 500

// qInsertTerms is the insert of n terms of one record: $1..$3 name the record, then a field id and a term per
// row. The rid comes from the record row, inserted earlier in the same transaction or batch.
func qInsertTerms(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO terms (account_id, kind, field_id, term, record_id, rid)
		SELECT r.account_id, r.kind, v.column1, v.column2, r.id, r.rid FROM records r, (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		p := strconv.Itoa(4 + 2*i)
		q := strconv.Itoa(5 + 2*i)
		if i == 0 {
			// The first row types the columns (PostgreSQL infers the rest from it).
			b.WriteString("(CAST($" + p + " AS BIGINT), CAST($" + q + " AS TEXT))")
		} else {
			b.WriteString("($" + p + ", $" + q + ")")
		}
	}
	b.WriteString(`) v WHERE r.account_id = $1 AND r.kind = $2 AND r.id = $3 ON CONFLICT DO NOTHING`)
	return b.String()
}

// queueSearchable queues the query of the searchable fields of a kind; readSearchable reads it.
func queueSearchable(b *Batch, accountID int64, kind string) {
	b.Queue(qSearchable, accountID, kind, string(core.TypePickOne), string(core.TypePickMultiple), string(core.TypeTextbox))
}

// readSearchable reads the searchable fields of a kind (field id -> type) from a batch.
func readSearchable(br BatchResults) (map[int64]core.FieldType, error) {
	out := map[int64]core.FieldType{}
	err := eachResult(br, func(rows Rows) error {
		var id int64
		var t string
		if err := rows.Scan(&id, &t); err != nil {
			return err
		}
		out[id] = core.FieldType(t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("searchable fields: %w", err)
	}
	return out, nil
}

func searchableFields(ctx context.Context, q Querier, accountID int64, kind string) (map[int64]core.FieldType, error) {
	b := &Batch{}
	queueSearchable(b, accountID, kind)
	br := q.SendBatch(ctx, b)
	types, err := readSearchable(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return types, err
}

// queueReindex queues the statements that rewrite the terms of the searchable fields (types) whose value
// differs between old and new (old nil: a new record). The old terms are computed from the old values, so
// every delete is a primary-key one; the new ones go in few statements.
func queueReindex(b *Batch, types map[int64]core.FieldType, accountID int64, kind string, id int64, old, new map[int64]string) {
	var rows []any
	for fid, t := range types {
		if old[fid] == new[fid] {
			continue
		}
		for _, term := range core.SearchTerms(t, old[fid]) {
			b.Queue(qDeleteTerm, accountID, kind, fid, term, id)
		}
		for _, term := range core.SearchTerms(t, new[fid]) {
			rows = append(rows, fid, term)
		}
	}
	for len(rows) > 0 {
		n := min(len(rows), 2*maxTerms)
		b.Queue(qInsertTerms(n/2), append([]any{accountID, kind, id}, rows[:n]...)...)
		rows = rows[n:]
	}
}

// reindexKind rebuilds the terms of every record of a kind (after its field definitions changed type, or
// after an import).
func reindexKind(ctx context.Context, tx Tx, accountID int64, kind string) error {
	if err := tx.Exec(ctx, "DELETE FROM terms WHERE account_id = $1 AND kind = $2", accountID, kind); err != nil {
		return fmt.Errorf("reindex %s: %w", kind, err)
	}
	types, err := searchableFields(ctx, tx, accountID, kind)
	if err != nil || len(types) == 0 {
		return err
	}
	return indexKind(ctx, tx, accountID, kind, types)
}

// indexKind writes the terms of the fields types (field id -> type) of every record of a kind, which has none
// of them yet.
func indexKind(ctx context.Context, tx Tx, accountID int64, kind string, types map[int64]core.FieldType) error {
	var all [][]any
	err := each(ctx, tx, "SELECT rid, id, CAST(vals AS TEXT) FROM records WHERE account_id = $1 AND kind = $2",
		[]any{accountID, kind}, func(rows Rows) error {
			var rid, id int64
			var s string
			if err := rows.Scan(&rid, &id, &s); err != nil {
				return err
			}
			vals, err := decodeValues(s)
			if err != nil {
				return err
			}
			for fid, t := range types {
				seen := map[string]bool{}
				for _, term := range core.SearchTerms(t, vals[fid]) {
					if !seen[term] {
						seen[term] = true
						all = append(all, []any{accountID, kind, fid, term, id, rid})
					}
				}
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("index %s: %w", kind, err)
	}
	if err := tx.CopyRows(ctx, "terms", []string{"account_id", "kind", "field_id", "term", "record_id", "rid"}, all); err != nil {
		return fmt.Errorf("index %s: %w", kind, err)
	}
	return nil
}

// indexTextboxes is the data step of migration 4, whose SQL deleted the terms of Textbox fields: it writes
// them again by the rule of core.SearchTerms, which since indexes words of any script (core.IsWord, folded by
// core.FoldWord), where only ASCII letters and digits were indexed before. For ASCII words the terms are the
// same; the others are new, so titles written before the upgrade are found as well.
func indexTextboxes(ctx context.Context, tx Tx) error {
	type kindKey struct {
		account int64
		kind    string
	}
	textboxes := map[kindKey]map[int64]core.FieldType{}
	var order []kindKey
	err := each(ctx, tx, "SELECT account_id, kind, id FROM fields WHERE type = $1 ORDER BY account_id, kind, id",
		[]any{string(core.TypeTextbox)}, func(rows Rows) error {
			var k kindKey
			var id int64
			if err := rows.Scan(&k.account, &k.kind, &id); err != nil {
				return err
			}
			if textboxes[k] == nil {
				textboxes[k] = map[int64]core.FieldType{}
				order = append(order, k)
			}
			textboxes[k][id] = core.TypeTextbox
			return nil
		})
	if err != nil {
		return fmt.Errorf("index Textbox fields: %w", err)
	}
	for _, k := range order {
		if err := indexKind(ctx, tx, k.account, k.kind, textboxes[k]); err != nil {
			return err
		}
	}
	return nil
}
