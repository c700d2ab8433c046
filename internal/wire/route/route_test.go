package route

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     string
		path    string
		query   string
		class   Class
		version int
		key     string
	}{
		{"record v2", "/api2/demo/re/1", "/api2/demo/re/1", "", Record, 2, "demo"},
		{"record v1", "/api/demo/ft/7", "/api/demo/ft/7", "", Record, 1, "demo"},
		{"collection", "/api2/demo/re", "/api2/demo/re", "", Collection, 2, "demo"},
		{"fields", "/api2/demo/uc/field", "/api2/demo/uc/field", "", Fields, 2, "demo"},
		{"object", "/api2/demo/object", "/api2/demo/object", "", Object, 2, "demo"},
		{"users", "/api2/demo/user", "/api2/demo/user", "", Users, 2, "demo"},
		{"user by email", "/api2/demo/user/a%40b.test", "/api2/demo/user/a@b.test", "", User, 2, "demo"},
		{"views", "/api2/demo/re/view", "/api2/demo/re/view", "", Views, 2, "demo"},
		{"view", "/api2/demo/re/view/12", "/api2/demo/re/view/12", "", View, 2, "demo"},
		{"view search", "/api2/demo/re/view/12/search?last_updated_time>1262493473",
			"/api2/demo/re/view/12/search", "last_updated_time%3E1262493473", ViewSearch, 2, "demo"},
		{"search encoded op", "/api2/demo/re/search?last_updated_time%3E1262493473",
			"/api2/demo/re/search", "last_updated_time%3E1262493473", Search, 2, "demo"},
		{"search sorted", "/api2/demo/re/search?field_103=1&created_by=5&&",
			"/api2/demo/re/search", "created_by=5&field_103=1", Search, 2, "demo"},
		{"search space is %20", "/api2/demo/re/search?field_101=a%20b", "/api2/demo/re/search", "field_101=a%20b", Search, 2, "demo"},
		{"search plus is a plus sign", "/api2/demo/re/search?created_time>+1262493473&field_101=a%2Bb",
			"/api2/demo/re/search", "created_time%3E%2B1262493473&field_101=a%2Bb", Search, 2, "demo"},
		{"related", "/api2/demo/re/1/related", "/api2/demo/re/1/related", "", Related, 2, "demo"},
		{"history", "/api2/demo/re/1/fieldhistory/103", "/api2/demo/re/1/fieldhistory/103", "", History, 2, "demo"},
		{"throttle", "/api2/demo/rate_throttle_status", "/api2/demo/rate_throttle_status", "", Throttle, 2, "demo"},
		{"dot segments", "/api2/./demo/x/../re/1", "/api2/demo/re/1", "", Record, 2, "demo"},
		{"dotdot above root", "/../../api2/demo/re/1", "/api2/demo/re/1", "", Record, 2, "demo"},
		{"encoded dot segment", "/api2/demo/%2e%2e/demo/re/1", "/api2/demo/re/1", "", Record, 2, "demo"},
		{"trailing slash kept", "/api2/demo/re/1/", "/api2/demo/re/1/", "", Record, 2, "demo"},
		{"absolute form", "http://gw.test:8080/api2/demo/re/1?x", "/api2/demo/re/1", "x", Record, 2, "demo"},
		{"fragment dropped", "/api2/demo/re/1#top", "/api2/demo/re/1", "", Record, 2, "demo"},
		{"root", "/", "/", "", Unknown, 0, ""},
		{"healthz", "/healthz", "/healthz", "", Unknown, 0, ""},
		{"bad version", "/api02/demo/re/1", "/api02/demo/re/1", "", Unknown, 0, ""},
		{"plus version", "/api+2/demo/re/1", "/api+2/demo/re/1", "", Unknown, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse([]byte(tc.raw))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.raw, err)
			}
			if got, want := r.Path, tc.path; got != want {
				t.Errorf("path=%q, want %q", got, want)
			}
			if got, want := r.Query, tc.query; got != want {
				t.Errorf("query=%q, want %q", got, want)
			}
			if got, want := r.Class, tc.class; got != want {
				t.Errorf("class=%q, want %q", got, want)
			}
			if got, want := r.Version, tc.version; got != want {
				t.Errorf("version=%d, want %d", got, want)
			}
			if got, want := r.APIKey, tc.key; got != want {
				t.Errorf("key=%q, want %q", got, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want error
	}{
		{"encoded slash", "/api2/demo/re%2F1", ErrBadPath},
		{"bad escape", "/api2/demo/re/%zz", ErrBadPath},
		{"control char", "/api2/demo/re/%00", ErrBadPath},
		{"relative", "api2/demo", ErrBadPath},
		{"empty", "", ErrBadPath},
		{"bad query escape", "/api2/demo/re/search?a=%zz", ErrBadQuery},
		{"query control", "/api2/demo/re/search?a=%0a", ErrBadQuery},
		{"empty segment", "/api2/demo//re/1", ErrEmptySegment},
		{"empty segment at the start", "//api2/demo/re/1", ErrEmptySegment},
		{"two trailing slashes", "/api2/demo/re/1//", ErrEmptySegment},
		{"empty segment in the absolute form", "http://gw.test/api2//demo/re/1", ErrEmptySegment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse([]byte(tc.raw)); err != tc.want {
				t.Fatalf("Parse(%q) error=%v, want %v", tc.raw, err, tc.want)
			}
		})
	}
}

// TestClassifyMostSpecificWins pins the class of paths that more than one route's template could describe, or
// none: the most specific template wins (a literal segment before a parameter, from the left), and a path of no
// route is Unknown.
func TestClassifyMostSpecificWins(t *testing.T) {
	for raw, want := range map[string]Class{
		"/api2/k":                         Unknown,
		"/api2/k/user/view":               User,
		"/api2/k/user/search":             User,
		"/api2/k/user/1/related":          Related,
		"/api2/k/object/1":                Record,
		"/api2/k/rate_throttle_status/1":  Record,
		"/api2/k/search/view":             Views,
		"/api2/k/re/view/search":          View,
		"/api2/k/re/view/1/x":             Unknown,
		"/api2/k/re/field/1":              Unknown,
		"/api2/k/re/1/fieldhistory":       Unknown,
		"/api2/k/re/view/fieldhistory/1":  History,
		"/api2/k/re/1/fieldhistory/1/x":   Unknown,
		"/api2/k/%7Bsegment%7D/%7Bid%7D/": Record,
	} {
		r, err := Parse([]byte(raw))
		if err != nil {
			t.Fatalf("Parse(%q): %v", raw, err)
		}
		if r.Class != want {
			t.Errorf("Parse(%q).Class = %q, want %q", raw, r.Class, want)
		}
	}
}

// FuzzParse checks that Parse never panics and that its output is a fixed point: parsing the normalised
// target again gives the same route (one form for routing, keying and forwarding).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/api2/demo/re/1", "/api/demo/re/search?a>1&b=%3C2", "/a//b/../c/./d/", "/%2e%2e/x",
		"http://h/api2/k/user/a%40b", "/api2/demo/re/view/12/search?x+y=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := Parse([]byte(raw))
		if err != nil {
			return
		}
		if p, _, _ := strings.Cut(raw, "?"); plainPath(p) {
			// The fast path must give what the general one gives.
			segs, trailing, err := segments(p)
			if err != nil {
				t.Fatalf("plain path %q fails the general parse: %v", p, err)
			}
			var b strings.Builder
			for _, s := range segs {
				b.WriteString("/" + url.PathEscape(s))
			}
			if trailing || len(segs) == 0 {
				b.WriteString("/")
			}
			if b.String() != p {
				t.Fatalf("plain path %q normalises to %q in general", p, b.String())
			}
		}
		r2, err := Parse([]byte(r.URI()))
		if err != nil {
			t.Fatalf("normalised %q of %q does not parse: %v", r.URI(), raw, err)
		}
		if r2.Path != r.Path || r2.Query != r.Query || r2.Class != r.Class || r2.APIKey != r.APIKey ||
			r2.Version != r.Version || !slices.Equal(r2.Segments, r.Segments) {
			t.Fatalf("not a fixed point: %q -> %+v -> %+v", raw, r, r2)
		}
	})
}

func TestBase(t *testing.T) {
	for raw, want := range map[string]string{
		"/api2/acme/re/1":     "/api2/acme/",
		"/api/acme":           "/api/acme/",
		"/api/acme/":          "/api/acme/",
		"/api3/acme/x?y=1":    "/api3/acme/",
		"/api2/ac%20me/./re":  "/api2/ac%20me/",
		"/api2/acme/../other": "/api2/other/",
		"/nosuch/acme/re/1":   "",
		"/api2":               "",
	} {
		r, err := Parse([]byte(raw))
		if err != nil {
			t.Fatalf("Parse(%q): %v", raw, err)
		}
		if got := r.Base(); got != want {
			t.Errorf("Parse(%q).Base() = %q, want %q", raw, got, want)
		}
	}
}

// BenchmarkParse measures Parse on the targets the gateway sees most: a plain path (the fast path that keeps
// the path as it is), a path that needs normalising, and a search with a query to decode and sort.
func BenchmarkParse(b *testing.B) {
	for _, tc := range []struct{ name, raw string }{
		{"plain", "/api2/demo/re/1"},
		{"normalise", "/api2/./demo/x/../re/a%40b/"},
		{"query", "/api2/demo/re/search?field_103=1&created_by=5"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			raw := []byte(tc.raw)
			b.ReportAllocs()
			for range b.N {
				if _, err := Parse(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestParseID: an id is read as the interface writes ids, so one record has one address: the gateway keys and
// scopes only ids the core reads, and the core answers 404 to any other form.
func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		seg  string
		want int64
		ok   bool
	}{
		{"14", 14, true},
		{"999999999999999999", 999999999999999999, true},
		{"014", 0, false}, // a leading zero: "14" is the record's one address
		{"0000000000000000014", 0, false},
		{"1000000000000000000", 0, false}, // 19 digits
		{"0", 0, false},
		{"00", 0, false},
		{"", 0, false},
		{"+14", 0, false},
		{"-1", 0, false},
		{"1e3", 0, false},
		{"RE-14", 0, false},
	} {
		got, ok := ParseID(tc.seg)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseID(%q) = %d, %v; want %d, %v", tc.seg, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAuthority(t *testing.T) {
	for _, tc := range []struct {
		target, want string
		ok           bool
	}{
		{"http://gw.example:8080/api2/demo/re/1", "gw.example:8080", true},
		{"HTTPS://gw.example?x", "gw.example", true},
		{"http://gw.example", "gw.example", true},
		{"http:///api2/demo", "", true},
		{"http://demo@evil.test#f", "demo@evil.test", true},
		{"/api2/demo/re/1", "", false},
		{"ftp://gw.example/", "", false},
		{"http:/gw.example/", "", false},
	} {
		got, ok := Authority(tc.target)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Authority(%q) = %q, %v; want %q, %v", tc.target, got, ok, tc.want, tc.ok)
		}
		if b, bok := Authority([]byte(tc.target)); string(b) != got || bok != ok {
			t.Errorf("Authority([]byte(%q)) = %q, %v; the string form gives %q, %v", tc.target, b, bok, got, ok)
		}
	}
}
