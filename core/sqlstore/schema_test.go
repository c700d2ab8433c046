package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/sqlite"
)

func TestMain(m *testing.M) {
	m.Run() // TestMain returning, the test binary exits with m.Run's code
	pgtest.Stop()
}

// TestSchemasAgree migrates a new SQLite file and a new PostgreSQL database and checks that the two dialects'
// migrations give the same tables, columns, primary keys, unique keys and indexes: the store writes its
// statements once for both, and a snapshot moves between them without translation.
func TestSchemasAgree(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "core.db")
	lite, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	lite.Close()
	dsn := pgtest.Shared(t).NewDatabase(t)
	pg, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	pg.Close()

	want := sqliteSchema(t, path)
	got := postgresSchema(t, dsn)
	if len(want) < 20 {
		t.Fatalf("SQLite schema looks empty: %v", want)
	}
	for _, s := range want {
		if !slices.Contains(got, s) {
			t.Errorf("only in SQLite: %s", s)
		}
	}
	for _, s := range got {
		if !slices.Contains(want, s) {
			t.Errorf("only in PostgreSQL: %s", s)
		}
	}
}

// The schema as sorted lines: "t.column", "t primary key (a, b)", "t unique (a, b)", "t index name (a, b)".

func sqliteSchema(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables := queryStrings(t, db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	var out []string
	for _, table := range tables {
		pk := map[int]string{}
		rows, err := db.Query("SELECT name, pk FROM pragma_table_info($1)", table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var col string
			var n int
			if err := rows.Scan(&col, &n); err != nil {
				t.Fatal(err)
			}
			out = append(out, table+"."+col)
			if n > 0 {
				pk[n] = col
			}
		}
		rows.Close()
		if len(pk) > 0 {
			cols := make([]string, len(pk))
			for n, c := range pk {
				cols[n-1] = c
			}
			out = append(out, fmt.Sprintf("%s primary key (%s)", table, strings.Join(cols, ", ")))
		}
		type index struct {
			name, origin string
			unique       bool
		}
		var idx []index
		rows, err = db.Query(`SELECT name, "unique", origin FROM pragma_index_list($1)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var i index
			if err := rows.Scan(&i.name, &i.unique, &i.origin); err != nil {
				t.Fatal(err)
			}
			idx = append(idx, i)
		}
		rows.Close()
		for _, i := range idx {
			cols := strings.Join(queryStrings(t, db, "SELECT name FROM pragma_index_info($1) ORDER BY seqno", i.name), ", ")
			switch {
			case i.origin == "pk": // listed from table_info
			case i.unique:
				out = append(out, fmt.Sprintf("%s unique (%s)", table, cols))
			default:
				out = append(out, fmt.Sprintf("%s index %s (%s)", table, i.name, cols))
			}
		}
	}
	slices.Sort(out)
	return out
}

func postgresSchema(t *testing.T, dsn string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var out []string
	rows, err := conn.Query(ctx, `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, cols...)
	rows, err = conn.Query(ctx, `SELECT t.relname, i.relname, ix.indisprimary, ix.indisunique,
		array_to_string(ARRAY(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, n)
			JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n), ', ')
		FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace WHERE ns.nspname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, name, cols string
		var primary, unique bool
		if err := rows.Scan(&table, &name, &primary, &unique, &cols); err != nil {
			t.Fatal(err)
		}
		switch {
		case primary:
			out = append(out, fmt.Sprintf("%s primary key (%s)", table, cols))
		case unique:
			out = append(out, fmt.Sprintf("%s unique (%s)", table, cols))
		default:
			out = append(out, fmt.Sprintf("%s index %s (%s)", table, name, cols))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func queryStrings(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
