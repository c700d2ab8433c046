package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/core"
)

const (
	writers          = 8
	writesPerWriter  = 25
	updatesPerWriter = 10
)

// testParallelCreates creates records from several goroutines at once: every create succeeds and the ids are
// exactly 1..n, each given once.
func testParallelCreates(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	ids := make(chan int64, writers*writesPerWriter)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range writesPerWriter {
				r, err := st.CreateRecord(ctx, acme, core.Record{Kind: "bug", CreatedBy: 5, CreatedTime: t1,
					VersionComment: fmt.Sprintf("w%d-%d", w, i)})
				if err != nil {
					t.Errorf("CreateRecord from writer %d: %v", w, err)
					return
				}
				ids <- r.ID
			}
		})
	}
	wg.Wait()
	close(ids)
	var got []int64
	for id := range ids {
		got = append(got, id)
	}
	slices.Sort(got)
	want := make([]int64, writers*writesPerWriter)
	for i := range want {
		want[i] = int64(i + 1)
	}
	check(t, "ids of parallel creates", got, want)
	check(t, "records found", len(search(t, st, acme, "bug", "")), len(want))
	seen := map[string]bool{}
	for _, id := range want {
		c := record(t, st, acme, "bug", id).VersionComment
		if seen[c] {
			t.Errorf("two records hold the comment %q", c)
		}
		seen[c] = true
	}
}

// testConcurrentUpdates updates one record from several goroutines at once: every update lands, the versions
// handed out are exactly 2..n+1, and the field history has one entry per change, each starting from the value
// the previous one left.
func testConcurrentUpdates(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	const n = writers * updatesPerWriter
	versions := make(chan int64, n)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range updatesPerWriter {
				r, err := st.UpdateRecord(ctx, acme, "re", 1, core.Update{UserID: 5, Time: t3 + int64(i),
					Values: map[int64]string{reDesc: fmt.Sprintf("w%d-%d", w, i)}})
				if err != nil {
					t.Errorf("UpdateRecord from writer %d: %v", w, err)
					return
				}
				versions <- r.Version
			}
		})
	}
	wg.Wait()
	close(versions)
	var got []int64
	for v := range versions {
		got = append(got, v)
	}
	slices.Sort(got)
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 2)
	}
	check(t, "versions handed out", got, want)
	r := record(t, st, acme, "re", 1)
	check(t, "final version", r.Version, int64(n+1))

	h, err := st.History(ctx, acme, "re", 1, reDesc)
	checkErr(t, "History", err, nil)
	if len(h) != n {
		t.Fatalf("history has %d entries, want %d", len(h), n)
	}
	prev := "<b>Export</b> the list"
	written := map[string]bool{}
	for i, c := range h {
		if c.Old != prev {
			t.Errorf("history[%d].Old = %q, want %q (the previous New)", i, c.Old, prev)
		}
		written[c.New] = true
		prev = c.New
	}
	check(t, "last history entry", prev, r.Values[reDesc])
	check(t, "distinct values in history", len(written), n)
}
