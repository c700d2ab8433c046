package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/sqlstore"
)

// TestMigrateFromV1 opens a file written by schema version 1 (terms without rowids) and checks that
// migration 2 fills them in, so field searches find the old records.
func TestMigrateFromV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := fs.ReadFile(sqlstore.SQLite.Migrations, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE schema_version (version INTEGER NOT NULL)",
		string(v1),
		"INSERT INTO schema_version VALUES (1)",
		"INSERT INTO accounts VALUES (1, 'k', 'K')",
		"INSERT INTO objects VALUES (1, 're', 'u', 'Requirement', 'Requirements', '', 'RE', 0)",
		`INSERT INTO fields VALUES (1, 1, 're', 'Title', 'Textbox', 'title', 0, 1, '', '', 0, ''),
			(1, 2, 're', 'Status', 'Picklist-Pick One', '', 0, 2, '', '', 0, 'normal')`,
		"INSERT INTO field_options VALUES (1, 2, 1, 'A', '', 1, 0), (1, 2, 2, 'B', '', 2, 0)",
		`INSERT INTO records VALUES (7, 1, 're', 3, 1, 10, 1, 10, 1, 0, '', '{"1":"Old","2":"2"}'),
			(8, 1, 're', 4, 1, 10, 1, 10, 1, 0, '', '{"1":"Other","2":"1"}')`,
		"INSERT INTO terms VALUES (1, 're', 1, 'old', 3), (1, 're', 2, '2', 3), (1, 're', 1, 'other', 4), (1, 're', 2, '1', 4)",
		"INSERT INTO counters VALUES (1, 're', 4)",
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	for _, tc := range []struct {
		cond core.Condition
		want int64
	}{
		{core.Condition{Attr: "field_2", Op: '=', Value: "2", FieldID: 2, Int: 2}, 3},
		{core.Condition{Attr: "field_2", Op: '=', Value: "1", FieldID: 2, Int: 1}, 4},
		{core.Condition{Attr: "field_1", Op: '=', Value: "OLD", FieldID: 1}, 3},
	} {
		ms, err := s.Search(ctx, 1, "re", []core.Condition{tc.cond})
		if err != nil {
			t.Fatalf("Search(%s): %v", tc.cond, err)
		}
		if len(ms) != 1 || ms[0].ID != tc.want {
			t.Errorf("Search(%s) = %+v, want record %d", tc.cond, ms, tc.want)
		}
	}
	// New writes keep working on the migrated file.
	r, err := s.CreateRecord(ctx, 1, core.Record{Kind: "re", CreatedBy: 1, CreatedTime: 20,
		Values: map[int64]string{2: "2"}})
	if err != nil {
		t.Fatalf("CreateRecord: %v", err)
	}
	ms, err := s.Search(ctx, 1, "re", []core.Condition{{Attr: "field_2", Op: '=', Value: "2", FieldID: 2, Int: 2}})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if got, want := len(ms), 2; got != want || ms[1].ID != r.ID {
		t.Errorf("after a create: %+v, want records 3 and %d", ms, r.ID)
	}
}
