package route

import (
	"fmt"
	"slices"
	"strings"
)

// Class names a route of the interface. It is the route label of the metrics, logs and traces of the gateway and
// of the core alike, and the name cache.ttl_by_route gives a route.
type Class string

// The classes of the routes of docs/api.md, and Unknown for a path that is none of them.
const (
	Unknown    Class = "unknown"
	Throttle   Class = "rate_throttle_status" // answered by the gateway
	Object     Class = "object"
	Users      Class = "users"
	User       Class = "user"
	Collection Class = "collection" // POST /{segment}
	Record     Class = "record"
	Fields     Class = "fields"
	Views      Class = "views"
	View       Class = "view"
	ViewSearch Class = "view_search"
	Search     Class = "search"
	Related    Class = "related"
	History    Class = "history"
)

// Spec is one route of the interface: a path under {base_url} (/api{N}/{api_key}) and what it serves.
type Spec struct {
	// Template is the path after the key, as docs/api.md writes it: literal segments, and "{name}" for a segment
	// that names something. "{segment}" is a record kind's segment (re, ft, uc, or a custom object's
	// api_prefix); the other names are those of the OpenAPI document's path parameters.
	Template string
	Class    Class
	// Methods are the methods the route serves, in the order Allow names them. HEAD goes with GET.
	Methods []string
	// MinVersion is the first API version that has the route: 1 (/api/, /api1/) or 2 (/api2/).
	MinVersion int
	// Cacheable: the gateway may cache a successful GET (or HEAD).
	Cacheable bool
	// GatewayOnly: the gateway answers the route itself; the core does not know the path.
	GatewayOnly bool

	allow  string   // Methods joined as an Allow header writes them
	segs   []string // Template's segments, "" for a parameter
	params []string // the name of each parameter of the template at its place, "" for a literal segment
}

// table is the route table of the interface: the one list of its routes, from which the gateway classifies and
// keys a request, the core dispatches it and labels its metrics, and the OpenAPI document is written. Adding a
// route is one entry here and its handler in the core (core/api) or the gateway. The order is the order of the
// OpenAPI document; matching does not depend on it (see Match).
var table = []Spec{
	{Template: "/object", Class: Object, Methods: get, MinVersion: 2, Cacheable: true},
	{Template: "/user", Class: Users, Methods: get, MinVersion: 1, Cacheable: true},
	{Template: "/user/{id_or_email}", Class: User, Methods: get, MinVersion: 1, Cacheable: true},
	{Template: "/rate_throttle_status", Class: Throttle, Methods: get, MinVersion: 1, GatewayOnly: true},
	{Template: "/{segment}", Class: Collection, Methods: []string{"POST"}, MinVersion: 1},
	{Template: "/{segment}/{id}", Class: Record, Methods: []string{"GET", "PUT", "DELETE"}, MinVersion: 1, Cacheable: true},
	{Template: "/{segment}/field", Class: Fields, Methods: get, MinVersion: 1, Cacheable: true},
	{Template: "/{segment}/view", Class: Views, Methods: get, MinVersion: 2, Cacheable: true},
	{Template: "/{segment}/view/{view_id}", Class: View, Methods: get, MinVersion: 2, Cacheable: true},
	{Template: "/{segment}/view/{view_id}/search", Class: ViewSearch, Methods: get, MinVersion: 2, Cacheable: true},
	{Template: "/{segment}/search", Class: Search, Methods: get, MinVersion: 2, Cacheable: true},
	{Template: "/{segment}/{id}/related", Class: Related, Methods: get, MinVersion: 2, Cacheable: true},
	{Template: "/{segment}/{id}/fieldhistory/{field_id}", Class: History, Methods: get, MinVersion: 2, Cacheable: true},
}

var get = []string{"GET"}

// Table returns the routes of the interface, in the order of the OpenAPI document.
func Table() []Spec { return slices.Clone(table) }

// Allow is the value of the Allow header of a 405 on the route: its methods, comma-separated.
func (s *Spec) Allow() string { return s.allow }

// Allows reports whether the route serves method; HEAD is served where GET is.
func (s *Spec) Allows(method string) bool {
	if method == "HEAD" {
		method = "GET"
	}
	return slices.Contains(s.Methods, method)
}

// Spec is the route of class c; ok is false for Unknown and any name that is no class. Do not modify it.
func (c Class) Spec() (s *Spec, ok bool) {
	s, ok = byClass[c]
	return s, ok
}

// Cacheable reports whether a successful GET of a route of class c may be cached.
func (c Class) Cacheable() bool {
	s, ok := byClass[c]
	return ok && s.Cacheable
}

// CachedClass returns the class named name among those whose reads the gateway may cache: the names
// cache.ttl_by_route accepts.
func CachedClass(name string) (Class, bool) {
	c := Class(name)
	return c, c.Cacheable()
}

// CachedClasses are the names of the classes whose reads the gateway may cache, in the order of the table.
func CachedClasses() []string {
	var names []string
	for _, s := range table {
		if s.Cacheable {
			names = append(names, string(s.Class))
		}
	}
	return names
}

// Match is the route of segs, the decoded segments of a path after the key, or nil when the path is no route of
// the interface. Of the routes of as many segments whose literal segments are the path's, the most specific
// wins: the one with a literal segment where the others have a parameter, read from the left. So
// "user/search" is the user of that name (user/{id_or_email}), not a search of a kind "user", and the order of
// the table does not matter. Match does not look at the version: a caller checks MinVersion. Do not modify the
// Spec.
func Match(segs []string) *Spec {
	if len(segs) >= len(byLength) {
		return nil
	}
	for _, s := range byLength[len(segs)] {
		if s.matches(segs) {
			return s
		}
	}
	return nil
}

// matches reports whether segs, of the template's length, have its literal segments.
func (s *Spec) matches(segs []string) bool {
	for i, want := range s.segs {
		if want != "" && want != segs[i] {
			return false
		}
	}
	return true
}

var (
	byLength [][]*Spec // the routes by their number of segments, the most specific first
	byClass  map[Class]*Spec
)

func init() {
	byClass = make(map[Class]*Spec, len(table))
	for i := range table {
		s := &table[i]
		if err := s.compile(); err != nil {
			panic("route table: " + err.Error())
		}
		if _, dup := byClass[s.Class]; dup || s.Class == Unknown {
			panic("route table: class " + string(s.Class) + " given twice")
		}
		byClass[s.Class] = s
		for len(byLength) <= len(s.segs) {
			byLength = append(byLength, nil)
		}
		for _, o := range byLength[len(s.segs)] {
			if slices.Equal(o.segs, s.segs) {
				panic("route table: " + s.Template + " and " + o.Template + " match the same paths")
			}
		}
		byLength[len(s.segs)] = append(byLength[len(s.segs)], s)
	}
	for _, list := range byLength {
		slices.SortStableFunc(list, func(a, b *Spec) int { return moreSpecific(a.segs, b.segs) })
	}
}

// moreSpecific orders templates of one length: -1 when a has a literal segment where b has a parameter, at the
// first segment where that differs.
func moreSpecific(a, b []string) int {
	for i := range a {
		switch {
		case a[i] != "" && b[i] == "":
			return -1
		case a[i] == "" && b[i] != "":
			return 1
		}
	}
	return 0
}

// compile checks a table entry and splits its template.
func (s *Spec) compile() error {
	t, ok := strings.CutPrefix(s.Template, "/")
	if !ok || t == "" {
		return fmt.Errorf("%q: a template starts with / and names at least one segment", s.Template)
	}
	if len(s.Methods) == 0 || s.MinVersion < 1 || s.Class == "" {
		return fmt.Errorf("%q: a route has a class, methods and a version", s.Template)
	}
	if slices.Contains(s.Methods, "HEAD") {
		return fmt.Errorf("%q: HEAD goes with GET and is not listed", s.Template)
	}
	for seg := range strings.SplitSeq(t, "/") {
		name, param := strings.CutPrefix(seg, "{")
		switch {
		case seg == "":
			return fmt.Errorf("%q: empty segment", s.Template)
		case param && (!strings.HasSuffix(name, "}") || len(name) < 2):
			return fmt.Errorf("%q: malformed parameter %q", s.Template, seg)
		case param:
			s.segs = append(s.segs, "")
			s.params = append(s.params, name[:len(name)-1])
		default:
			s.segs = append(s.segs, seg)
			s.params = append(s.params, "")
		}
	}
	s.allow = strings.Join(s.Methods, ", ")
	return nil
}

// Param is the segment of segs, a path of the route, at the route's parameter "{name}"; ok is false when the
// template has no such parameter.
func (s *Spec) Param(name string, segs []string) (seg string, ok bool) {
	for i, n := range s.params {
		if n == name && i < len(segs) {
			return segs[i], true
		}
	}
	return "", false
}
