package api_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/core/sqlite"
)

// TestConcurrentReadModifyWrite runs clients of three users that each read a record, add one to an integer field
// and send the document read back with its version_number, all at once, on both engines: every acknowledged
// increment is in the record, the version rose by one per increment and the field history steps by +1 with no
// gap. A version_number checked against a read made before the write transaction lets a stale PUT through.
func TestConcurrentReadModifyWrite(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			e := serve(t, eng.open(t), api.Options{})
			id := e.create("/api2", "re", body("requirement", "field_101", "Counter", "field_106", "0"))
			n, _ := strconv.ParseInt(id, 10, 64)
			c := coretest.Counter{
				Bases: []string{e.URL + "/api2/" + keyAcme},
				Users: [][2]string{{"alice", "alice-secret"}, {"bob", "bob-secret"}, {"carol", "carol-secret"}},
				Kind:  "re", Root: "requirement", Field: "field_106", ID: n,
				Clients: 6, Increments: 8,
			}
			res, err := coretest.RunCounter(c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d acknowledged, %d refused as stale", res.Acked, res.Conflicts)
			coretest.CheckCounter(t, c, 0, 1, res)
		})
	}
}

// interposer is a store whose next UpdateRecord lets another writer commit first: the moment a concurrent
// client's write lands between a PUT's arrival and its transaction, made certain.
type interposer struct {
	core.Store
	mu     sync.Mutex
	before func(core.Store) // run once, by the next UpdateRecord, on the store underneath
}

func (s *interposer) UpdateRecord(ctx context.Context, accountID int64, kind string, id int64, edit core.Edit) (core.Record, error) {
	s.mu.Lock()
	f := s.before
	s.before = nil
	s.mu.Unlock()
	if f != nil {
		f(s.Store)
	}
	return s.Store.UpdateRecord(ctx, accountID, kind, id, edit)
}

// TestUpdateChecksTheRecordAsWritten lets another write commit just before a PUT's transaction: the PUT is
// checked against the record as it is then, never against what it was when the PUT arrived. A version_number
// that was current on arrival is refused; a value equal to what the record held on arrival is still written,
// because the PUT sends it; a PUT of a record deleted meanwhile is 404.
func TestUpdateChecksTheRecordAsWritten(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "core.db"))
	if err != nil {
		t.Fatal(err)
	}
	ip := &interposer{Store: st}
	e := serve(t, ip, api.Options{})
	acct, err := st.Account(context.Background(), keyAcme)
	if err != nil {
		t.Fatal(err)
	}
	// writeEstimate is the concurrent client: it sets field_106 of the record to v.
	writeEstimate := func(id int64, v string) func(core.Store) {
		return func(inner core.Store) {
			if _, err := inner.UpdateRecord(context.Background(), acct.ID, "re", id, core.Unconditional(core.Update{
				Values: map[int64]string{106: v}, UserID: 6, Time: 1_800_000_000})); err != nil {
				t.Errorf("concurrent write: %v", err)
			}
		}
	}
	estimate := func(id string) string {
		got := e.must(req{Path: "/api2/" + keyAcme + "/re/" + id}, http.StatusOK).Body
		i := strings.Index(got, "<name>field_106</name>")
		return got[i : i+120]
	}

	t.Run("stale version_number", func(t *testing.T) {
		id := e.create("/api2", "re", body("requirement", "field_101", "A", "field_106", "5"))
		n, _ := strconv.ParseInt(id, 10, 64)
		ip.before = writeEstimate(n, "6")
		got := e.do(req{Method: "PUT", Path: "/api2/" + keyAcme + "/re/" + id,
			Body: body("requirement", "version_number", "1", "field_106", "7")})
		if got.Status != http.StatusBadRequest || !strings.Contains(got.Body, "version_number") {
			t.Fatalf("PUT with the version read before a concurrent write: %d %s, want 400 version_number", got.Status, got.Body)
		}
		if v := estimate(id); !strings.Contains(v, "<value>6</value>") {
			t.Errorf("the concurrent write was overwritten: %s", v)
		}
	})
	t.Run("value equal to the stale read", func(t *testing.T) {
		id := e.create("/api2", "re", body("requirement", "field_101", "B", "field_106", "5"))
		n, _ := strconv.ParseInt(id, 10, 64)
		ip.before = writeEstimate(n, "6")
		e.must(req{Method: "PUT", Path: "/api2/" + keyAcme + "/re/" + id, Body: body("requirement", "field_106", "5")},
			http.StatusOK)
		if v := estimate(id); !strings.Contains(v, "<value>5</value>") {
			t.Errorf("an acknowledged PUT of 5 was dropped as unchanged: %s", v)
		}
	})
	t.Run("deleted meanwhile", func(t *testing.T) {
		id := e.create("/api2", "re", body("requirement", "field_101", "C"))
		n, _ := strconv.ParseInt(id, 10, 64)
		ip.before = func(inner core.Store) {
			if err := inner.DeleteRecord(context.Background(), acct.ID, "re", n, 6, 1_800_000_000, nil); err != nil {
				t.Errorf("concurrent delete: %v", err)
			}
		}
		e.must(req{Method: "PUT", Path: "/api2/" + keyAcme + "/re/" + id, Body: body("requirement", "field_106", "1")},
			http.StatusNotFound)
	})
}

// TestConcurrentDeletes deletes one record from several clients at once while others update it: exactly one
// delete is acknowledged (the others get 409), and no update is acknowledged after it.
func TestConcurrentDeletes(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			e := serve(t, eng.open(t), api.Options{})
			id := e.create("/api2", "re", body("requirement", "field_101", "Doomed", "field_106", "0"))
			path := "/api2/" + keyAcme + "/re/" + id
			var (
				wg                  sync.WaitGroup
				mu                  sync.Mutex
				deleted, conflicted int
				lateUpdates         int
				deleteDone          bool
			)
			for i := range 12 {
				wg.Go(func() {
					if i%2 == 0 {
						got, err := e.send(req{Method: "DELETE", Path: path})
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err != nil:
							t.Error(err)
						case got.Status == http.StatusOK:
							deleted++
							deleteDone = true
						case got.Status == http.StatusConflict:
							conflicted++
						default:
							t.Errorf("DELETE: %d %s", got.Status, got.Body)
						}
						return
					}
					mu.Lock()
					before := deleteDone
					mu.Unlock()
					got, err := e.send(req{Method: "PUT", Path: path, Body: body("requirement", "field_106", strconv.Itoa(i))})
					switch {
					case err != nil:
						t.Error(err)
					case got.Status == http.StatusOK && before:
						mu.Lock()
						lateUpdates++
						mu.Unlock()
					case got.Status != http.StatusOK && got.Status != http.StatusNotFound:
						t.Errorf("PUT: %d %s", got.Status, got.Body)
					}
				})
			}
			wg.Wait()
			if deleted != 1 || conflicted != 5 {
				t.Errorf("%d deletes acknowledged and %d refused with 409, want 1 and 5", deleted, conflicted)
			}
			if lateUpdates != 0 {
				t.Errorf("%d updates sent after the delete was acknowledged were acknowledged", lateUpdates)
			}
			e.must(req{Path: path}, http.StatusNotFound)
		})
	}
}
