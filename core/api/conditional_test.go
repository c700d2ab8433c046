package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/api"
)

// etag reads a record and returns its ETag, failing the test when the read carries none or a weak one.
func (e *env) etag(path string) string {
	e.t.Helper()
	tag := e.must(req{Path: path}, http.StatusOK).Header.Get("ETag")
	if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		e.t.Fatalf("GET %s: ETag %q, want a strong entity tag", path, tag)
	}
	return tag
}

// TestIfMatch runs the conditional writes a client relies on against the core itself: two clients read one
// record and both write with their ETag, and only the first is applied (412 for the other, the record keeps
// the first write); a weak tag, "*" on a deleted or missing record, and If-Unmodified-Since before the last
// update are refused; a write without conditions is applied as always.
func TestIfMatch(t *testing.T) {
	e := start(t, api.Options{})
	base := "/api2/" + keyAcme + "/re/"
	put := func(e *env, id, title string, h map[string]string) resp {
		return e.do(req{Method: "PUT", Path: base + id, Body: body("requirement", "field_101", title), Header: h})
	}
	failed := func(t *testing.T, what string, got resp) {
		t.Helper()
		if got.Status != http.StatusPreconditionFailed || !strings.Contains(got.Body, "<error") ||
			!strings.Contains(got.Body, "Precondition failed") {
			t.Errorf("%s: %d %s, want 412 with an XML error", what, got.Status, got.Body)
		}
	}
	titleOf := func(e *env, id string) string {
		b := e.must(req{Path: base + id}, http.StatusOK).Body
		i := strings.Index(b, "<name>field_101</name>")
		return b[i : i+80]
	}

	t.Run("lost update refused", func(t *testing.T) {
		e := e.on(t)
		id := e.create("/api2", "re", body("requirement", "field_101", "Start"))
		a, b := e.etag(base+id), e.etag(base+id)
		if a != b {
			t.Fatalf("two reads of an unchanged record: ETag %s then %s", a, b)
		}
		if got := put(e, id, "Alice", map[string]string{"If-Match": a}); got.Status != http.StatusOK {
			t.Fatalf("first conditional PUT: %d %s", got.Status, got.Body)
		}
		failed(t, "second PUT with the same ETag", put(e, id, "Bob", map[string]string{"If-Match": b}))
		if got := titleOf(e, id); !strings.Contains(got, "Alice") {
			t.Errorf("the refused PUT was written: %s", got)
		}
		now := e.etag(base + id)
		if now == a {
			t.Fatalf("ETag unchanged by an update: %s", now)
		}
		// A list naming the current tag among others matches.
		if got := put(e, id, "Bob", map[string]string{"If-Match": a + `, "other", ` + now}); got.Status != http.StatusOK {
			t.Errorf("PUT with the current ETag in a list: %d %s", got.Status, got.Body)
		}
		failed(t, "DELETE with a stale ETag", e.do(req{Method: "DELETE", Path: base + id, Header: map[string]string{"If-Match": now}}))
		e.must(req{Method: "DELETE", Path: base + id, Header: map[string]string{"If-Match": e.etag(base + id)}}, http.StatusOK)
	})
	t.Run("weak tag never matches", func(t *testing.T) {
		e := e.on(t)
		id := e.create("/api2", "re", body("requirement", "field_101", "Weak"))
		failed(t, "PUT with W/ of the current ETag", put(e, id, "x", map[string]string{"If-Match": "W/" + e.etag(base+id)}))
		failed(t, "DELETE with W/ of the current ETag",
			e.do(req{Method: "DELETE", Path: base + id, Header: map[string]string{"If-Match": "W/" + e.etag(base+id)}}))
	})
	t.Run("star", func(t *testing.T) {
		e := e.on(t)
		id := e.create("/api2", "re", body("requirement", "field_101", "Star"))
		e.must(req{Method: "PUT", Path: base + id, Body: body("requirement", "field_101", "y"),
			Header: map[string]string{"If-Match": "*"}}, http.StatusOK)
		e.must(req{Method: "DELETE", Path: base + id, Header: map[string]string{"If-Match": "*"}}, http.StatusOK)
		failed(t, "DELETE with * of a deleted record", e.do(req{Method: "DELETE", Path: base + id, Header: map[string]string{"If-Match": "*"}}))
		failed(t, "PUT with * of a deleted record", put(e, id, "z", map[string]string{"If-Match": "*"}))
		failed(t, "PUT with * of a missing record", put(e, "999999", "z", map[string]string{"If-Match": "*"}))
		// Without If-Match they answer as they always did.
		e.must(req{Method: "DELETE", Path: base + id}, http.StatusConflict)
		e.must(req{Method: "PUT", Path: base + id, Body: body("requirement", "field_101", "z")}, http.StatusNotFound)
	})
	t.Run("If-Unmodified-Since", func(t *testing.T) {
		e := e.on(t)
		id := e.create("/api2", "re", body("requirement", "field_101", "Since"))
		before := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
		after := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
		failed(t, "PUT unmodified since before the last update", put(e, id, "x", map[string]string{"If-Unmodified-Since": before}))
		failed(t, "DELETE unmodified since before the last update",
			e.do(req{Method: "DELETE", Path: base + id, Header: map[string]string{"If-Unmodified-Since": before}}))
		e.must(req{Method: "PUT", Path: base + id, Body: body("requirement", "field_101", "x"),
			Header: map[string]string{"If-Unmodified-Since": after}}, http.StatusOK)
		// If-Match decides when both are sent; a date that is none is ignored.
		e.must(req{Method: "PUT", Path: base + id, Body: body("requirement", "field_101", "y"),
			Header: map[string]string{"If-Match": e.etag(base + id), "If-Unmodified-Since": before}}, http.StatusOK)
		e.must(req{Method: "PUT", Path: base + id, Body: body("requirement", "field_101", "z"),
			Header: map[string]string{"If-Unmodified-Since": "yesterday"}}, http.StatusOK)
	})
	t.Run("bad If-Match", func(t *testing.T) {
		e := e.on(t)
		id := e.create("/api2", "re", body("requirement", "field_101", "Bad"))
		for _, v := range []string{"abc", `"unterminated`, ","} {
			got := put(e, id, "x", map[string]string{"If-Match": v})
			if got.Status != http.StatusBadRequest || !strings.Contains(got.Body, "If-Match") {
				t.Errorf("If-Match: %s: %d %s, want 400 naming If-Match", v, got.Status, got.Body)
			}
		}
		if got := titleOf(e, id); !strings.Contains(got, "Bad") {
			t.Errorf("a refused PUT was written: %s", got)
		}
	})
	t.Run("versions have their own tags", func(t *testing.T) {
		// A Textarea shows value_plaintext in version 2 only: the bodies differ, and so do the tags.
		id := e.create("/api2", "re", body("requirement", "field_101", "Both", "field_102", "&lt;p&gt;Text&lt;/p&gt;"))
		v1, v2 := e.etag("/api1/"+keyAcme+"/re/"+id), e.etag(base+id)
		if v1 == v2 {
			t.Fatalf("versions 1 and 2 of different bodies share the ETag %s", v1)
		}
		e.must(req{Method: "PUT", Path: "/api1/" + keyAcme + "/re/" + id, Body: body("requirement", "field_101", "x"),
			Header: map[string]string{"If-Match": v2}}, http.StatusPreconditionFailed)
		e.must(req{Method: "PUT", Path: "/api1/" + keyAcme + "/re/" + id, Body: body("requirement", "field_101", "x"),
			Header: map[string]string{"If-Match": v1}}, http.StatusOK)
	})
}

// TestIfMatchRace has many clients read one version of a record and all write it back conditionally at once,
// round after round, on both engines: exactly one write per version is applied and every other gets 412.
func TestIfMatchRace(t *testing.T) {
	const clients, rounds = 8, 4
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			e := serve(t, eng.open(t), api.Options{})
			id := e.create("/api2", "re", body("requirement", "field_101", "Raced", "field_106", "0"))
			path := "/api2/" + keyAcme + "/re/" + id
			for round := range rounds {
				tag := e.etag(path)
				var (
					wg          sync.WaitGroup
					mu          sync.Mutex
					won, failed int
				)
				for c := range clients {
					wg.Go(func() {
						r := req{Method: "PUT", Path: path, Header: map[string]string{"If-Match": tag},
							Body: body("requirement", "field_106", strconv.Itoa(round*100+c+1))} // never the stored 0: a write that changes nothing keeps the tag
						if round == rounds-1 && c%2 == 1 {
							r = req{Method: "DELETE", Path: path, Header: map[string]string{"If-Match": tag}}
						}
						got, err := e.send(r)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err != nil:
							t.Error(err)
						case got.Status == http.StatusOK:
							won++
						case got.Status == http.StatusPreconditionFailed:
							failed++
						default:
							t.Errorf("%s: %d %s", r.Method, got.Status, got.Body)
						}
					})
				}
				wg.Wait()
				if won != 1 || failed != clients-1 {
					t.Fatalf("round %d: %d writes applied and %d refused with 412, want 1 and %d", round, won, failed, clients-1)
				}
			}
		})
	}
}
