package route

import (
	"slices"
	"strings"
	"testing"
)

// concrete fills the parameters of a template with value.
func concrete(template, value string) []string {
	segs := strings.Split(strings.TrimPrefix(template, "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = value
		}
	}
	return segs
}

// TestEveryRouteMatchesItself: a path of each route's template, whatever its parameters hold, is that route, so
// no route of the table is shadowed by another and none depends on the order of the table. A parameter that
// spells a literal of another route ("view", "search", ...) loses to the literal only where the other route has
// the literal further left.
func TestEveryRouteMatchesItself(t *testing.T) {
	for _, s := range Table() {
		for _, value := range []string{"7", "risk", "a@b.test", "{id}"} {
			segs := concrete(s.Template, value)
			if got := Match(segs); got == nil || got.Class != s.Class {
				t.Errorf("Match(%q) = %v, want the route %s (%s)", segs, got, s.Class, s.Template)
			}
		}
	}
}

// TestMatchNone: paths of no template are no route.
func TestMatchNone(t *testing.T) {
	for _, p := range []string{"", "re/1/x/y", "re/1/x/y/z/w", "re/field/1", "re/view/1/x", "re/1/fieldhistory",
		"re/1/related/2", "user/1/x", "a/b/c/d/e/f/g/h/i"} {
		var segs []string
		if p != "" {
			segs = strings.Split(p, "/")
		}
		if got := Match(segs); got != nil {
			t.Errorf("Match(%q) = %s, want no route", p, got.Class)
		}
	}
}

// TestSpecMethods: Allow names the methods in the table's order, and HEAD is served where GET is.
func TestSpecMethods(t *testing.T) {
	rec, ok := Record.Spec()
	if !ok {
		t.Fatal("no record route")
	}
	if got, want := rec.Allow(), "GET, PUT, DELETE"; got != want {
		t.Errorf("Allow() = %q, want %q", got, want)
	}
	for m, want := range map[string]bool{"GET": true, "HEAD": true, "PUT": true, "DELETE": true, "POST": false,
		"PATCH": false, "get": false} {
		if got := rec.Allows(m); got != want {
			t.Errorf("record Allows(%s) = %v, want %v", m, got, want)
		}
	}
	coll, _ := Collection.Spec()
	if coll.Allows("HEAD") || coll.Allows("GET") || !coll.Allows("POST") {
		t.Errorf("collection serves %v, HEAD only with GET", coll.Methods)
	}
	if _, ok := Unknown.Spec(); ok {
		t.Error("Unknown has a route")
	}
}

// TestCachedClasses: the names cache.ttl_by_route accepts are the classes of the cacheable routes, and nothing
// the gateway never caches (a write's collection, the gateway's own throttle status, unknown).
func TestCachedClasses(t *testing.T) {
	names := CachedClasses()
	for _, s := range Table() {
		if _, ok := CachedClass(string(s.Class)); ok != s.Cacheable || slices.Contains(names, string(s.Class)) != s.Cacheable {
			t.Errorf("class %s: cached %v, table says %v", s.Class, ok, s.Cacheable)
		}
	}
	for _, name := range []string{"collection", "rate_throttle_status", "unknown", "records", ""} {
		if _, ok := CachedClass(name); ok {
			t.Errorf("CachedClass(%q) is ok", name)
		}
	}
}

// TestCompileRefuses: a malformed entry of the table stops the program at its start (init panics), never
// matches something else.
func TestCompileRefuses(t *testing.T) {
	for _, s := range []Spec{
		{Template: "", Class: "x", Methods: get, MinVersion: 1},
		{Template: "/", Class: "x", Methods: get, MinVersion: 1},
		{Template: "x", Class: "x", Methods: get, MinVersion: 1},
		{Template: "/a//b", Class: "x", Methods: get, MinVersion: 1},
		{Template: "/a/{", Class: "x", Methods: get, MinVersion: 1},
		{Template: "/a/{}", Class: "x", Methods: get, MinVersion: 1},
		{Template: "/a", Class: "x", MinVersion: 1},
		{Template: "/a", Class: "x", Methods: get},
		{Template: "/a", Methods: get, MinVersion: 1},
		{Template: "/a", Class: "x", Methods: []string{"GET", "HEAD"}, MinVersion: 1},
	} {
		if err := s.compile(); err == nil {
			t.Errorf("compile(%+v) accepted", s)
		}
	}
}

// TestParam: a parameter is read at its place in the template, and a name the template lacks is no parameter.
func TestParam(t *testing.T) {
	h, _ := History.Spec()
	segs := []string{"re", "12", "fieldhistory", "101"}
	for name, want := range map[string]string{"segment": "re", "id": "12", "field_id": "101", "view_id": "", "fieldhistory": ""} {
		got, ok := h.Param(name, segs)
		if got != want || ok != (want != "") {
			t.Errorf("Param(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
