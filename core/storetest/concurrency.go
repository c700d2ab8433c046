package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
				r, err := st.UpdateRecord(ctx, acme, "re", 1, core.Unconditional(core.Update{UserID: 5, Time: t3 + int64(i),
					Values: map[int64]string{reDesc: fmt.Sprintf("w%d-%d", w, i)}}))
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

// testConcurrentEdits has several goroutines add one to a counter at once, each reading the counter from the
// record its edit is given: the store hands each edit the record as the previous update left it, so the counter
// ends at exactly the number of updates and its history steps by one from 0.
func testConcurrentEdits(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	const n = writers * updatesPerWriter
	increment := func(stored core.Record) (core.Update, error) {
		v, err := strconv.Atoi(cmp.Or(stored.Values[reEstimate], "0"))
		if err != nil {
			return core.Update{}, err
		}
		return core.Update{UserID: 5, Time: t3, Values: map[int64]string{reEstimate: strconv.Itoa(v + 1)}}, nil
	}
	start, err := strconv.Atoi(cmp.Or(record(t, st, acme, "re", 1).Values[reEstimate], "0"))
	checkErr(t, "start value", err, nil)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for range updatesPerWriter {
				if _, err := st.UpdateRecord(ctx, acme, "re", 1, increment); err != nil {
					t.Errorf("UpdateRecord from writer %d: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	check(t, "counter", record(t, st, acme, "re", 1).Values[reEstimate], strconv.Itoa(start+n))
	h, err := st.History(ctx, acme, "re", 1, reEstimate)
	checkErr(t, "History", err, nil)
	h = h[len(h)-n:]
	for i, c := range h {
		if want := strconv.Itoa(start + i + 1); c.New != want {
			t.Fatalf("history step %d: %q -> %q, want -> %q", i, c.Old, c.New, want)
		}
	}
}

// testEditRefuses checks that an edit's error aborts the update with nothing written, and that the edit of a
// missing or deleted record is never called.
func testEditRefuses(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	before := record(t, st, acme, "re", 1)
	refused := errors.New("refused")
	_, err := st.UpdateRecord(ctx, acme, "re", 1, func(stored core.Record) (core.Update, error) {
		if stored.Version != before.Version {
			t.Errorf("edit got version %d, want %d", stored.Version, before.Version)
		}
		return core.Update{}, refused
	})
	checkErr(t, "refusing edit", err, refused)
	after := record(t, st, acme, "re", 1)
	check(t, "version after a refused edit", after.Version, before.Version)
	check(t, "values after a refused edit", after.Values, before.Values)

	called := false
	never := func(core.Record) (core.Update, error) { called = true; return core.Update{}, nil }
	_, err = st.UpdateRecord(ctx, acme, "re", 999, never)
	checkErr(t, "edit of a missing record", err, core.ErrNotFound)
	checkErr(t, "DeleteRecord", st.DeleteRecord(ctx, acme, "re", 1, 5, t3, nil), nil)
	_, err = st.UpdateRecord(ctx, acme, "re", 1, never)
	checkErr(t, "edit of a deleted record", err, core.ErrNotFound)
	if called {
		t.Error("the edit of a missing or deleted record was called")
	}
}

// testCheckRefusesDelete checks that a delete's check sees the live record as stored, that its error aborts the
// delete with nothing written, and that the check of a missing or deleted record is never called.
func testCheckRefusesDelete(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	update(t, st, acme, "re", 1, core.Update{UserID: 6, Time: t3, Values: map[int64]string{reEstimate: "41"}})
	before := record(t, st, acme, "re", 1)
	refused := errors.New("refused")
	var seen core.Record
	err := st.DeleteRecord(ctx, acme, "re", 1, 5, t3+1, func(stored core.Record) error {
		seen = stored
		return refused
	})
	checkErr(t, "refusing check", err, refused)
	check(t, "the record the check was given", seen, before)
	check(t, "record after a refused delete", record(t, st, acme, "re", 1), before)

	err = st.DeleteRecord(ctx, acme, "re", 1, 5, t3+2, func(core.Record) error { return nil })
	checkErr(t, "accepting check", err, nil)
	check(t, "DeletedTime after an accepted check", record(t, st, acme, "re", 1).DeletedTime, int64(t3+2))

	called := false
	never := func(core.Record) error { called = true; return nil }
	checkErr(t, "check of a deleted record", st.DeleteRecord(ctx, acme, "re", 1, 5, t3+3, never), core.ErrConflict)
	checkErr(t, "check of a missing record", st.DeleteRecord(ctx, acme, "re", 999, 5, t3+3, never), core.ErrNotFound)
	if called {
		t.Error("the check of a missing or deleted record was called")
	}
}

// testConditionalWritersRace has writers that all read one version of a record race to update or delete it,
// each only if the record still has that version, as a client sending If-Match does: exactly one write per
// version wins, whatever mix of updates and deletes races, because the check sees the row the write locks.
func testConditionalWritersRace(t *testing.T, st core.Store) {
	acme, _ := provisioned(t, st)
	errStale := errors.New("stale")
	for round := range 4 {
		read := record(t, st, acme, "re", 1)
		if round == 3 {
			read = record(t, st, acme, "re", 2)
		}
		var (
			mu   sync.Mutex
			won  []string
			wg   sync.WaitGroup
			same = func(stored core.Record) error {
				if stored.Version != read.Version {
					return errStale
				}
				return nil
			}
		)
		for w := range writers {
			wg.Go(func() {
				var err error
				what := fmt.Sprintf("update by writer %d", w)
				if w%3 == 2 && round == 3 {
					what = fmt.Sprintf("delete by writer %d", w)
					err = st.DeleteRecord(ctx, acme, "re", read.ID, 5, t3, same)
				} else {
					_, err = st.UpdateRecord(ctx, acme, "re", read.ID, func(stored core.Record) (core.Update, error) {
						if err := same(stored); err != nil {
							return core.Update{}, err
						}
						return core.Update{UserID: 5, Time: t3, Values: map[int64]string{reEstimate: strconv.Itoa(w + 100*round)}}, nil
					})
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, what)
				case errors.Is(err, errStale), errors.Is(err, core.ErrConflict), errors.Is(err, core.ErrNotFound):
				default:
					t.Errorf("%s: %v", what, err)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 {
			t.Fatalf("round %d: %d writes of version %d won (%v), want exactly 1", round, len(won), read.Version, won)
		}
	}
}
