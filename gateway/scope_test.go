package gateway

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/translate"
)

// kindOf is a kind of record of the demo account as a write names it: its path segment, the root element of a
// write body and its title field.
type kindOf struct {
	segment, root string
	title         int
}

var demoKinds = []kindOf{{"re", "requirement", 101}, {"ft", "feature", 201}, {"uc", "use_case", 301},
	{"risk", "custom_object", 401}}

// titleBody is the body of a write that sets the record's title.
func (k kindOf) titleBody(title string) string {
	f := "field_" + strconv.Itoa(k.title)
	return "<" + k.root + "><fields><field><name>" + f + "</name><value>" + title + "</value></field></fields></" +
		k.root + ">"
}

// TestWriteInvalidatesItsScope warms the cache with reads of every class, makes one write, and checks which
// reads the gateway still answers from the cache: the write's record in every version and representation,
// its history, the searches and views of its kind and every related read go to the core; the other records,
// the other kinds' searches, field lists, view definitions, users and objects stay cached. An id written with
// leading zeros names no record (404) and changes nothing.
func TestWriteInvalidatesItsScope(t *testing.T) {
	reads := map[string]string{ // name -> path under /api2/demo unless it starts with /
		"record":         "/re/2",
		"record json":    "/re/2 json",
		"record v1":      "/api/demo/re/2",
		"history":        "/re/2/fieldhistory/101",
		"related":        "/re/2/related",
		"search":         "/re/search?created_time%3E1000000000",
		"view":           "/re/view/1",
		"view search":    "/re/view/1/search?created_by=1",
		"other related":  "/ft/2/related",
		"other record":   "/re/4",
		"other kind":     "/ft/2",
		"other search":   "/ft/search?created_time%3E1000000000",
		"other view":     "/risk/view/2",
		"fields":         "/re/field",
		"view list":      "/re/view",
		"users":          "/user",
		"user":           "/user/1",
		"objects":        "/object",
		"other history":  "/re/4/fieldhistory/101",
		"custom record":  "/risk/1",
		"custom related": "/risk/1/related",
	}
	// "record json" comes before "record": its miss fetches the XML form again and stores it, so "record" is
	// then a hit of the new version (checked against the core like every other read).
	record := []string{"record json", "record", "record v1", "history"}
	kind := []string{"search", "view", "view search"}
	related := []string{"related", "other related", "custom related"}
	kept := []string{"other record", "other kind", "other search", "other view", "fields", "view list", "users",
		"user", "objects", "other history", "custom record"}
	re := demoKinds[0]
	tests := []struct {
		name           string
		method, path   string // under /api2/demo
		body           string
		status         int
		changed, stays []string
	}{
		{"update", http.MethodPut, "/re/2", re.titleBody("Updated"), http.StatusOK,
			concat(record, kind, related), kept},
		{"update of an id with leading zeros (no record)", http.MethodPut, "/re/002", re.titleBody("Zeros"),
			http.StatusNotFound, nil, concat(record, kind, related, kept)},
		{"update through version 1", "PUT", "/api/demo/re/2", re.titleBody("Version one"), http.StatusOK,
			concat(record, kind, related), kept},
		{"create", http.MethodPost, "/re", re.titleBody("Created"), http.StatusCreated,
			concat(kind, related), concat(record, kept)},
		{"delete", http.MethodDelete, "/re/2", "", http.StatusOK,
			concat(record, kind, related), kept},
		{"refused update", http.MethodPut, "/re/2", "<requirement><fields><field><name>field_999</name>" +
			"<value>x</value></field></fields></requirement>", http.StatusBadRequest,
			nil, concat(record, kind, related, kept)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := coretest.Start(t, coretest.Options{})
			gw := startGateway(t, cachedOptions(c))
			path := func(name string) (string, bool) {
				p, repr, _ := strings.Cut(reads[name], " ")
				if !strings.HasPrefix(p, "/api") {
					p = "/api2/demo" + p
				}
				return p, repr == "json"
			}
			read := func(name string) reply {
				p, json := path(name)
				if json {
					return get(t, gw.URL+p, "Accept: application/json")
				}
				return get(t, gw.URL+p)
			}
			for name := range reads {
				if res := read(name); res.Status != http.StatusOK {
					t.Fatalf("%s: %d %q", name, res.Status, res.Body)
				}
				if got := read(name).Header.Get("X-Cache"); got != "HIT" {
					t.Fatalf("%s not cached before the write: X-Cache=%q", name, got)
				}
			}
			target := tc.path
			if !strings.HasPrefix(target, "/api") {
				target = "/api2/demo" + target
			}
			if res := do(t, tc.method, gw.URL+target, "demo", "demo", tc.body); res.Status != tc.status {
				t.Fatalf("%s %s: %d %q, want %d", tc.method, tc.path, res.Status, res.Body, tc.status)
			}
			for _, name := range tc.changed {
				res := read(name)
				if got := res.Header.Get("X-Cache"); got == "HIT" && name != "record" {
					t.Errorf("%s is still answered from the cache after the write", name)
				}
				p, json := path(name)
				if want := coreRead(t, c, p, json); res.Status != want.Status ||
					want.Status == http.StatusOK && res.Body != want.Body {
					t.Errorf("%s after the write: %d %q, the core says %d %q", name, res.Status, res.Body,
						want.Status, want.Body)
				}
			}
			for _, name := range tc.stays {
				if got := read(name).Header.Get("X-Cache"); got != "HIT" {
					t.Errorf("%s: X-Cache=%q after the write, want HIT (the write cannot change it)", name, got)
				}
			}
		})
	}
}

// coreRead is the core's own answer to a read, in JSON as the gateway translates it.
func coreRead(tb testing.TB, c *coretest.Core, path string, json bool) reply {
	tb.Helper()
	res := do(tb, http.MethodGet, c.URL+path, "demo", "demo", "")
	if json && res.Status == http.StatusOK {
		js, err := translate.XMLToJSON([]byte(res.Body))
		if err != nil {
			tb.Fatalf("translate the core's %s: %v", path, err)
		}
		res.Body = string(js)
	}
	return res
}

func concat(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

// TestCacheHitRatioUnderWrites runs a seeded mix of 85% reads and 15% writes over 40 records of four kinds
// through a gateway in front of the core: reads of records (XML and JSON, both versions), their history and
// related items, searches and views; updates, creates and deletes. Every answer of the gateway is checked
// against the core's own answer to the same read, made just after: none may be stale. And the cache must
// keep serving while writes go on: at least 60% of the reads are hits (a write invalidating the whole
// account leaves about 12%).
func TestCacheHitRatioUnderWrites(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))

	type rec struct {
		kind kindOf
		id   string
	}
	// The live records of the demo account, then created ones up to 40.
	var live, deleted []rec
	for _, k := range demoKinds {
		for id := 1; id <= 13; id++ {
			if res := do(t, http.MethodGet, c.URL+"/api2/demo/"+k.segment+"/"+strconv.Itoa(id), "demo", "demo", ""); res.Status == http.StatusOK {
				live = append(live, rec{k, strconv.Itoa(id)})
			}
		}
	}
	create := func(base string, k kindOf, title string) rec {
		res := do(t, http.MethodPost, base+"/api2/demo/"+k.segment, "demo", "demo", k.titleBody(title))
		if res.Status != http.StatusCreated {
			t.Fatalf("create %s: %d %q", k.segment, res.Status, res.Body)
		}
		loc := res.Header.Get("Location")
		return rec{k, loc[strings.LastIndex(loc, "/")+1:]}
	}
	for i := 0; len(live) < 40; i++ {
		live = append(live, create(c.URL, demoKinds[i%len(demoKinds)], "Seeded "+strconv.Itoa(i)))
	}

	rng := rand.New(rand.NewPCG(29, 4))
	const ops = 2000
	reads, hits, stale := 0, 0, 0
	for i := range ops {
		if rng.IntN(100) < 15 {
			switch w := rng.IntN(20); {
			case w == 0 && len(live) > 30:
				j := rng.IntN(len(live))
				r := live[j]
				if res := do(t, http.MethodDelete, gw.URL+"/api2/demo/"+r.kind.segment+"/"+r.id, "demo", "demo", ""); res.Status != http.StatusOK {
					t.Fatalf("op %d: delete %s/%s: %d %q", i, r.kind.segment, r.id, res.Status, res.Body)
				}
				live = append(live[:j], live[j+1:]...)
				deleted = append(deleted, r)
			case w <= 1:
				live = append(live, create(gw.URL, demoKinds[rng.IntN(len(demoKinds))], "Created in op "+strconv.Itoa(i)))
			default:
				r := live[rng.IntN(len(live))]
				path := "/api2/demo/" + r.kind.segment + "/" + r.id
				if res := do(t, http.MethodPut, gw.URL+path, "demo", "demo", r.kind.titleBody("Op "+strconv.Itoa(i))); res.Status != http.StatusOK {
					t.Fatalf("op %d: update %s: %d %q", i, path, res.Status, res.Body)
				}
			}
			continue
		}
		r := live[rng.IntN(len(live))]
		path, json := "/api2/demo/"+r.kind.segment+"/"+r.id, false
		switch n := rng.IntN(100); {
		case n < 80:
		case n < 85:
			json = true
		case n < 88 && r.kind.segment != "risk":
			path = "/api/demo/" + r.kind.segment + "/" + r.id
		case n < 91:
			path = "/api2/demo/" + r.kind.segment + "/search?created_time%3E1000000000"
		case n < 93:
			path = "/api2/demo/re/view/1"
		case n < 95:
			path += "/related"
		case n < 97:
			path += "/fieldhistory/" + strconv.Itoa(r.kind.title)
		case n < 99 && len(deleted) > 0:
			d := deleted[rng.IntN(len(deleted))]
			path = "/api2/demo/" + d.kind.segment + "/" + d.id
		}
		var got reply
		if json {
			got = get(t, gw.URL+path, "Accept: application/json")
		} else {
			got = get(t, gw.URL+path)
		}
		reads++
		if got.Header.Get("X-Cache") == "HIT" {
			hits++
		}
		want := coreRead(t, c, path, json)
		if got.Status != want.Status || want.Status == http.StatusOK && got.Body != want.Body {
			stale++
			if stale <= 3 {
				t.Errorf("op %d: GET %s (json %v) through the gateway: %d %q (X-Cache %s); the core: %d %q", i, path,
					json, got.Status, got.Body, got.Header.Get("X-Cache"), want.Status, want.Body)
			}
		}
	}
	ratio := float64(hits) / float64(reads)
	t.Logf("%d reads, %d hits (%.1f%%), %d stale; %d live and %d deleted records at the end", reads, hits,
		100*ratio, stale, len(live), len(deleted))
	if stale > 0 {
		t.Errorf("%d of %d reads through the gateway differed from the core's answer", stale, reads)
	}
	if ratio < 0.60 {
		t.Errorf("hit ratio %.1f%% (%d of %d reads), want at least 60%%", 100*ratio, hits, reads)
	}
}
