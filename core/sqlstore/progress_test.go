package sqlstore_test

import (
	"context"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/sqlstore"
	"github.com/reqgate/reqgate/core/storetest"
)

// TestProgress checks that Apply and Import report the records they write to the callback of
// core.WithProgress: every seed record of an account file, and every record of a snapshot, the records of a
// large one in several calls.
func TestProgress(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { testProgress(t, e) })
	}
}

func testProgress(t *testing.T, e engine) {
	src, dst := e.openNew(t), e.openNew(t)
	var calls, records int
	ctx := core.WithProgress(context.Background(), func(n int) { calls++; records += n })

	p := storetest.Fixture()
	want := 0
	for _, a := range p.Accounts {
		want += len(a.Records)
	}
	if err := src.Apply(ctx, p); err != nil {
		t.Fatal(err)
	}
	if records != want || want == 0 {
		t.Errorf("Apply reported %d records, want %d", records, want)
	}

	snap, err := src.Export(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	// Enough records for several chunks of the import.
	defer sqlstore.SetImportChunk(10)()
	first := snap.Records[0]
	for id := int64(1000); len(snap.Records) < 35; id++ {
		r := first
		r.ID = id
		snap.Records = append(snap.Records, r)
	}
	calls, records = 0, 0
	if err := dst.Import(ctx, snap, false); err != nil {
		t.Fatal(err)
	}
	if records != len(snap.Records) {
		t.Errorf("Import reported %d records, want %d", records, len(snap.Records))
	}
	if calls < 3 {
		t.Errorf("Import reported %d records in %d calls, want one per chunk", records, calls)
	}
}
