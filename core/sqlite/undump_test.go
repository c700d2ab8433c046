package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/storetest"
)

// TestExportImport moves the fixture accounts between two SQLite files and checks that the second export is
// the first; that an import over an account needs replace; and that a replace is seen at once by a store
// that had cached the old account's objects.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	src := open(t, filepath.Join(t.TempDir(), "src.db"))
	defer src.Close()
	dst := open(t, filepath.Join(t.TempDir(), "dst.db"))
	defer dst.Close()
	if err := src.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	if err := dst.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	acme, err := dst.Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Objects(ctx, acme.ID); err != nil { // now cached
		t.Fatal(err)
	}
	p := storetest.Fixture()
	p.Accounts = p.Accounts[:1]
	p.Accounts[0].Objects = append(p.Accounts[0].Objects, core.ObjectSpec{Object: core.Object{APIPrefix: "task",
		NameSingular: "Task", NamePlural: "Tasks", IDPrefix: "TSK"}})
	if err := src.Apply(ctx, p); err != nil {
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
	os, err := dst.Objects(ctx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(os), 6; got != want { // re, ft, uc, bug, risk, task
		t.Errorf("objects after the replacing import = %d, want %d (stale cache?)", got, want)
	}
	again, err := dst.Export(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, snap) {
		t.Errorf("export after import differs:\nbefore %+v\nafter  %+v", snap, again)
	}
}
