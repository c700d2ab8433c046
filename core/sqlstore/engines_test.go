package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, to write old schemas by hand

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/core/sqlstore"
	"github.com/reqgate/reqgate/core/storetest"
)

// store is what both engines' Open return.
type store interface {
	core.Store
	core.Exporter
	core.Importer
}

// engine opens one engine's store on a new database named by the string newDB returns.
type engine struct {
	name   string
	driver string // of database/sql
	newDB  func(t *testing.T) string
	open   func(ctx context.Context, dsn string) (store, error)
	v1     []string // a database of schema version 1, written as the released migration 0001 left it
}

var engines = []engine{
	{
		name:   "sqlite",
		driver: "sqlite",
		newDB:  func(t *testing.T) string { return filepath.Join(t.TempDir(), "core.db") },
		open:   func(ctx context.Context, dsn string) (store, error) { return sqlite.Open(ctx, dsn) },
		v1: []string{
			"INSERT INTO accounts VALUES (1, 'k', 'K')",
			"INSERT INTO objects VALUES (1, 're', 'u', 'Requirement', 'Requirements', '', 'RE', 0)",
			`INSERT INTO fields VALUES (1, 1, 're', 'Title', 'Textbox', 'title', 0, 1, '', '', 0, ''),
				(1, 2, 're', 'Status', 'Picklist-Pick One', '', 0, 2, '', '', 0, 'normal')`,
			"INSERT INTO field_options VALUES (1, 2, 1, 'A', '', 1, 0), (1, 2, 2, 'B', '', 2, 0)",
			`INSERT INTO records VALUES (7, 1, 're', 3, 1, 10, 1, 10, 1, 0, '', '{"1":"Old","2":"2"}'),
				(8, 1, 're', 4, 1, 10, 1, 10, 1, 0, '', '{"1":"Other","2":"1"}'),
				(9, 1, 're', 5, 1, 10, 1, 10, 1, 0, '', '{"1":"Été"}')`,
		},
	},
	{
		name:   "postgres",
		driver: "pgx",
		newDB:  func(t *testing.T) string { return pgtest.Shared(t).NewDatabase(t) },
		open:   func(ctx context.Context, dsn string) (store, error) { return postgres.Open(ctx, dsn) },
		v1: []string{
			"INSERT INTO accounts VALUES (1, 'k', 'K')",
			"INSERT INTO objects VALUES (1, 're', 'u', 'Requirement', 'Requirements', '', 'RE', false)",
			`INSERT INTO fields VALUES (1, 1, 're', 'Title', 'Textbox', 'title', false, 1, '', '', 0, ''),
				(1, 2, 're', 'Status', 'Picklist-Pick One', '', false, 2, '', '', 0, 'normal')`,
			"INSERT INTO field_options VALUES (1, 2, 1, 'A', '', 1, false), (1, 2, 2, 'B', '', 2, false)",
			`INSERT INTO records VALUES (1, 're', 3, 1, 10, 1, 10, 1, 0, '', '{"1":"Old","2":"2"}'),
				(1, 're', 4, 1, 10, 1, 10, 1, 0, '', '{"1":"Other","2":"1"}'),
				(1, 're', 5, 1, 10, 1, 10, 1, 0, '', '{"1":"Été"}')`,
		},
	},
}

func (e engine) openNew(t *testing.T) store {
	t.Helper()
	st, err := e.open(context.Background(), e.newDB(t))
	if err != nil {
		t.Fatalf("open %s: %v", e.name, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestExportImport exports the fixture accounts after some life (an update with history, a delete, a new
// custom object), imports them into another database of the same engine, and checks that the second export is
// the first; that an import over an account needs replace, and that a store that had cached the old account's
// objects sees the replacement at once; that search terms are rebuilt; and that an import failing part-way
// leaves nothing behind.
func TestExportImport(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { testExportImport(t, e) })
	}
}

func testExportImport(t *testing.T, e engine) {
	ctx := context.Background()
	src, dst := e.openNew(t), e.openNew(t)
	if err := src.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	p := storetest.Fixture()
	p.Accounts = p.Accounts[:1]
	p.Accounts[0].Objects = append(p.Accounts[0].Objects, core.ObjectSpec{Object: core.Object{APIPrefix: "task",
		NameSingular: "Task", NamePlural: "Tasks", IDPrefix: "TSK"}})
	if err := src.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	acme, err := src.Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	comment := "edited"
	if _, err := src.UpdateRecord(ctx, acme.ID, "re", 1, core.Unconditional(core.Update{UserID: 5, Time: 1_700_000_500,
		VersionComment: &comment, Values: map[int64]string{101: "Export to TSV", 103: "2"}})); err != nil {
		t.Fatal(err)
	}
	if err := src.DeleteRecord(ctx, acme.ID, "re", 4, 5, 1_700_000_600, nil); err != nil {
		t.Fatal(err)
	}
	keys, err := src.APIKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys, []string{"acme", "other"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("APIKeys = %v, want %v", got, want)
	}

	// dst already holds acme, and has cached its objects.
	if err := dst.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	dacme, err := dst.Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Objects(ctx, dacme.ID); err != nil {
		t.Fatal(err)
	}
	snap, err := src.Export(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Import(ctx, snap, false); !errors.Is(err, core.ErrConflict) {
		t.Errorf("Import over an existing account without replace: %v, want ErrConflict", err)
	}
	if err := dst.Import(ctx, snap, true); err != nil {
		t.Fatal(err)
	}
	os, err := dst.Objects(ctx, dacme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(os), 6; got != want { // re, ft, uc, bug, risk, task
		t.Errorf("objects after the replacing import = %d, want %d (stale cache?)", got, want)
	}
	if again, err := dst.Export(ctx, "acme"); err != nil || !reflect.DeepEqual(again, snap) {
		t.Errorf("export after import differs (%v):\nbefore %+v\nafter  %+v", err, snap, again)
	}
	got, err := dst.Search(ctx, dacme.ID, "re", []core.Condition{{Attr: "field_103", Op: '=', Value: "2", FieldID: 103, Int: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 1 || got[1].ID != 2 {
		t.Errorf("search field_103=2 after import = %+v, want records 1 and 2", got)
	}

	other, err := src.Export(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Import(ctx, other, true); err != nil {
		t.Fatal(err)
	}
	if again, err := dst.Export(ctx, "other"); err != nil || !reflect.DeepEqual(again, other) {
		t.Errorf("export of other after import differs (%v):\nbefore %+v\nafter  %+v", err, other, again)
	}

	// All or nothing: a snapshot with two users of one id fails and leaves no account.
	bad, err := src.Export(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	bad.APIKey = "broken"
	bad.Users = append(bad.Users, bad.Users[0])
	if err := dst.Import(ctx, bad, false); err == nil {
		t.Fatal("Import of a snapshot with a duplicate user: no error")
	}
	if _, err := dst.Account(ctx, "broken"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("after a failed import, Account(broken) = %v, want ErrNotFound", err)
	}
	if _, err := src.Export(ctx, "nobody"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Export(nobody) = %v, want ErrNotFound", err)
	}
}

// TestMigrateFromV1 opens a database written by schema version 1 (terms without the rids of their records,
// no terms for Textbox values that are not ASCII words) and checks that the migrations fill them in, so field
// searches find the old records, and that new writes keep working.
func TestMigrateFromV1(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { testMigrateFromV1(t, e) })
	}
}

func testMigrateFromV1(t *testing.T, e engine) {
	ctx := context.Background()
	dsn := e.newDB(t)
	raw, err := sql.Open(e.driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	d := sqlstore.SQLite
	if e.name == "postgres" {
		d = sqlstore.PostgreSQL
	}
	v1, err := fs.ReadFile(d.Migrations, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{"CREATE TABLE schema_version (version INTEGER NOT NULL)", string(v1),
		"INSERT INTO schema_version VALUES (1)"}, append(e.v1,
		"INSERT INTO terms VALUES (1, 're', 1, 'old', 3), (1, 're', 2, '2', 3), (1, 're', 1, 'other', 4), (1, 're', 2, '1', 4)",
		"INSERT INTO counters VALUES (1, 're', 5)")...) {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	s, err := e.open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	status2 := core.Condition{Attr: "field_2", Op: '=', Value: "2", FieldID: 2, Int: 2}
	for _, tc := range []struct {
		cond core.Condition
		want int64
	}{
		{status2, 3},
		{core.Condition{Attr: "field_2", Op: '=', Value: "1", FieldID: 2, Int: 1}, 4},
		{core.Condition{Attr: "field_1", Op: '=', Value: "OLD", FieldID: 1}, 3},
		// Schema 1 indexed ASCII words only: the title Été had no term, and is found after the upgrade.
		{core.Condition{Attr: "field_1", Op: '=', Value: "ÉTÉ", FieldID: 1}, 5},
	} {
		ms, err := s.Search(ctx, 1, "re", []core.Condition{tc.cond})
		if err != nil {
			t.Fatalf("Search(%s): %v", tc.cond, err)
		}
		if len(ms) != 1 || ms[0].ID != tc.want {
			t.Errorf("Search(%s) = %+v, want record %d", tc.cond, ms, tc.want)
		}
	}
	r, err := s.CreateRecord(ctx, 1, core.Record{Kind: "re", CreatedBy: 1, CreatedTime: 20,
		Values: map[int64]string{2: "2"}})
	if err != nil {
		t.Fatalf("CreateRecord: %v", err)
	}
	if _, err := s.UpdateRecord(ctx, 1, "re", 3, core.Unconditional(core.Update{UserID: 1, Time: 30,
		Values: map[int64]string{2: "1"}})); err != nil {
		t.Fatalf("UpdateRecord: %v", err)
	}
	ms, err := s.Search(ctx, 1, "re", []core.Condition{status2})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(ms) != 1 || ms[0].ID != r.ID {
		t.Errorf("after a create and an update: %+v, want record %d alone", ms, r.ID)
	}
}
