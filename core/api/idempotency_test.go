package api_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// withKey is r sent with an Idempotency-Key.
func withKey(r req, key string) req {
	r.Header = map[string]string{"Idempotency-Key": key}
	return r
}

// titles counts the live requirements of acme whose title is t.
func (e *env) titles(t string) int {
	e.t.Helper()
	got := e.must(req{Path: "/api2/" + keyAcme + "/re/search?created_time>1000000000"}, http.StatusOK).Body
	return strings.Count(got, "<title>"+t+"</title>")
}

// TestIdempotentCreate retries a create with the same Idempotency-Key: one record, the same status and
// Location each time, and the retry is marked as replayed.
func TestIdempotentCreate(t *testing.T) {
	e := start(t, api.Options{})
	post := withKey(req{Method: "POST", Path: "/api2/" + keyAcme + "/re", Body: body("requirement", "field_101", "Once")},
		`"3f1e-create"`)
	first := e.must(post, http.StatusCreated)
	again := e.must(post, http.StatusCreated)
	if a, b := first.Header.Get("Location"), again.Header.Get("Location"); a == "" || a != b {
		t.Errorf("Locations %q and %q, want one", a, b)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("Idempotent-Replayed: first %q, retry %q", first.Header.Get("Idempotent-Replayed"),
			again.Header.Get("Idempotent-Replayed"))
	}
	// Unquoted, as many clients send it, the key is the same key.
	e.must(withKey(post, "3f1e-create"), http.StatusCreated)
	if n := e.titles("Once"); n != 1 {
		t.Errorf("%d records made by one create retried, want 1", n)
	}

	// The same key with another body is refused and applies nothing; another user's key is its own.
	other := withKey(req{Method: "POST", Path: "/api2/" + keyAcme + "/re", Body: body("requirement", "field_101", "Twice")},
		"3f1e-create")
	if got := e.do(other); got.Status != http.StatusUnprocessableEntity || !strings.Contains(got.Body, "different request") {
		t.Errorf("key reused with another body: %d %s, want 422", got.Status, got.Body)
	}
	if n := e.titles("Twice"); n != 0 {
		t.Errorf("a refused reuse of a key created %d records", n)
	}
	other.User, other.Pass = "bob", "bob-secret"
	e.must(other, http.StatusCreated)
}

// TestIdempotentUpdateAndDelete: a retried PUT does not apply again over a newer write, a retried DELETE gets
// its first 200 (not 409), and a write that was refused keeps nothing, so its corrected retry with the same key
// is applied.
func TestIdempotentUpdateAndDelete(t *testing.T) {
	e := start(t, api.Options{})
	id := e.create("/api2", "re", body("requirement", "field_101", "Doc", "field_106", "1"))
	path := "/api2/" + keyAcme + "/re/" + id
	put := withKey(req{Method: "PUT", Path: path, Body: body("requirement", "field_106", "2")}, "put-1")
	e.must(put, http.StatusOK)
	e.must(req{Method: "PUT", Path: path, Body: body("requirement", "field_106", "3")}, http.StatusOK)
	e.must(put, http.StatusOK) // the retry arrives late
	if got := e.must(req{Path: path}, http.StatusOK).Body; !strings.Contains(got, "<value>3</value>") {
		t.Errorf("a retried PUT applied again over a newer write: %s", got)
	}

	bad := withKey(req{Method: "PUT", Path: path, Body: body("requirement", "field_106", "x")}, "put-2")
	e.must(bad, http.StatusBadRequest)
	bad.Body = body("requirement", "field_106", "4")
	e.must(bad, http.StatusOK)

	del := withKey(req{Method: "DELETE", Path: path}, "del-1")
	e.must(del, http.StatusOK)
	e.must(del, http.StatusOK)
	e.must(req{Method: "DELETE", Path: path}, http.StatusConflict)
}

// TestIdempotentCreatesRace sends one create with one key from many clients at once, on both engines: every
// client gets 201 with the same Location, and one record exists.
func TestIdempotentCreatesRace(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			e := serve(t, eng.open(t), api.Options{})
			post := withKey(req{Method: "POST", Path: "/api2/" + keyAcme + "/re",
				Body: body("requirement", "field_101", "Raced")}, "race-1")
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				locs = map[string]int{}
			)
			for range 10 {
				wg.Go(func() {
					got, err := e.send(post)
					mu.Lock()
					defer mu.Unlock()
					if err != nil || got.Status != http.StatusCreated {
						t.Errorf("create: %v %d %s", err, got.Status, got.Body)
						return
					}
					locs[got.Header.Get("Location")]++
				})
			}
			wg.Wait()
			if len(locs) != 1 {
				t.Errorf("Locations %v, want one", locs)
			}
			if n := e.titles("Raced"); n != 1 {
				t.Errorf("%d records, want 1", n)
			}
		})
	}
}

// TestIdempotencyKeyExpiresAndPersists: a receipt holds across a restart of the core on its store, and is
// forgotten after a day, when the key makes a new request.
func TestIdempotencyKeyExpiresAndPersists(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "core.db")
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	open := func() *env {
		st, err := sqlite.Open(ctx, file)
		if err != nil {
			t.Fatal(err)
		}
		e := serve(t, st, api.Options{Now: clk.Now})
		e.Store = st
		return e
	}
	post := withKey(req{Method: "POST", Path: "/api2/" + keyAcme + "/re", Body: body("requirement", "field_101", "Kept")},
		"day-1")
	e := open()
	// The restarted core listens elsewhere: a Location names the record at the address the retry was sent to.
	loc := strings.TrimPrefix(e.must(post, http.StatusCreated).Header.Get("Location"), e.URL)
	e.Store.Close()

	e = open()
	clk.Add(23 * time.Hour)
	if got := e.must(post, http.StatusCreated); got.Header.Get("Location") != e.URL+loc {
		t.Errorf("after a restart the retry got Location %q, want %q", got.Header.Get("Location"), e.URL+loc)
	}
	clk.Add(2 * time.Hour)
	if got := e.must(post, http.StatusCreated); got.Header.Get("Location") == e.URL+loc {
		t.Error("a key older than a day still replays")
	}
	if n := e.titles("Kept"); n != 2 {
		t.Errorf("%d records, want 2 (the key made a new request after a day)", n)
	}
}

// TestIdempotencyKeyRefused: a key that is empty, too long, of other characters or sent twice is 400.
func TestIdempotencyKeyRefused(t *testing.T) {
	e := start(t, api.Options{})
	for _, key := range []string{`""`, strings.Repeat("k", 256), "two words", `"a\"b"`, "é"} {
		got := e.do(withKey(req{Method: "POST", Path: "/api2/" + keyAcme + "/re",
			Body: body("requirement", "field_101", "Bad key")}, key))
		if got.Status != http.StatusBadRequest || !strings.Contains(got.Body, "Idempotency-Key") {
			t.Errorf("key %q: %d %s, want 400", key, got.Status, got.Body)
		}
	}
	if n := e.titles("Bad key"); n != 0 {
		t.Errorf("%d records made with refused keys", n)
	}
}
