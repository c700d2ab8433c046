package postgres_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/storetest"
)

// TestExportImport exports the fixture accounts after some life (an update with history, a delete), imports
// them into another database, and checks that the second export is the first; then that a second import
// is refused without replace, and that an import that fails part-way leaves nothing behind.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	src, dst := openFresh(t), openFresh(t)
	defer src.Close()
	defer dst.Close()
	if err := src.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	acme, err := src.Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	comment := "edited"
	if _, err := src.UpdateRecord(ctx, acme.ID, "re", 1, core.Update{UserID: 5, Time: 1_700_000_500,
		VersionComment: &comment, Values: map[int64]string{101: "Export to TSV", 103: "2"}}); err != nil {
		t.Fatal(err)
	}
	if err := src.DeleteRecord(ctx, acme.ID, "re", 4, 5, 1_700_000_600); err != nil {
		t.Fatal(err)
	}
	keys, err := src.APIKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys, []string{"acme", "other"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("APIKeys = %v, want %v", got, want)
	}
	for _, key := range keys {
		snap, err := src.Export(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Import(ctx, snap, false); err != nil {
			t.Fatalf("Import(%s): %v", key, err)
		}
		again, err := dst.Export(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, snap) {
			t.Errorf("%s: export after import differs:\nbefore %+v\nafter  %+v", key, snap, again)
		}
		if err := dst.Import(ctx, snap, false); !errors.Is(err, core.ErrConflict) {
			t.Errorf("second Import(%s) without replace: %v, want ErrConflict", key, err)
		}
		if err := dst.Import(ctx, snap, true); err != nil {
			t.Errorf("Import(%s, replace): %v", key, err)
		}
	}
	// Search terms are rebuilt on import.
	dacme, err := dst.Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.Search(ctx, dacme.ID, "re", []core.Condition{{Attr: "field_103", Op: '=', Value: "2", FieldID: 103, Int: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 1 || got[1].ID != 2 {
		t.Errorf("search field_103=2 after import = %+v, want records 1 and 2", got)
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
