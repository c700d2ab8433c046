package gateway

import (
	"net/http"
	"slices"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestHeadIsGetWithoutBody reads cached routes with GET and HEAD through a caching gateway and a gateway without
// a cache, in XML and JSON, plain and gzip: HEAD answers exactly the headers GET does (status, ETag,
// Cache-Control, Vary, Content-Type, the Content-Length of GET's body, X-Cache) and no body, from the cache (a
// HEAD after a GET is a HIT, a GET after a first HEAD too), and 304 when If-None-Match names the tag.
func TestHeadIsGetWithoutBody(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	plain := startGateway(t, withConfig(Options{Upstreams: []string{c.URL}}))
	paths := []string{
		"/api2/demo/re/1", "/api/demo/re/2", "/api2/demo/re/field", "/api2/demo/re/search?created_time%3E1000000000",
		"/api2/demo/re/view/1", "/api2/demo/user", "/api2/demo/object", "/api2/demo/re/1/related",
	}
	reprs := []struct{ name, accept, coding string }{
		{"xml", "application/xml", "identity"},
		{"json", "application/json", "identity"},
		{"xml gzip", "application/xml", "gzip"},
		{"json gzip", "application/json", "gzip"},
	}
	// Headers that differ between any two answers, GET's included.
	perAnswer := []string{"Date", "X-Request-Id", "Age"}
	compare := func(t *testing.T, what string, get, head reply) {
		t.Helper()
		if head.Status != get.Status {
			t.Errorf("%s: status %d, GET's %d", what, head.Status, get.Status)
		}
		if head.Body != "" {
			t.Errorf("%s: a body of %d bytes", what, len(head.Body))
		}
		for k := range get.Header {
			if !slices.Contains(perAnswer, k) && !slices.Equal(head.Header[k], get.Header[k]) {
				t.Errorf("%s: %s %q, GET's %q", what, k, head.Header[k], get.Header[k])
			}
		}
		for k := range head.Header {
			if _, ok := get.Header[k]; !ok && !slices.Contains(perAnswer, k) {
				t.Errorf("%s: %s %q, which GET has not", what, k, head.Header[k])
			}
		}
	}
	for _, rp := range reprs {
		cached := startGateway(t, cachedOptions(c)) // a cache of its own: the first read of each path misses
		for i, path := range paths {
			t.Run(rp.name+" "+path, func(t *testing.T) {
				hdr := []string{"Accept: " + rp.accept, "Accept-Encoding: " + rp.coding}
				// Half the paths are read first with HEAD: what HEAD stores, GET hits.
				if i%2 == 1 {
					first := do(t, http.MethodHead, cached.URL+path, "demo", "demo", "", hdr...)
					if first.Status != http.StatusOK || first.Header.Get("X-Cache") != "MISS" {
						t.Fatalf("first HEAD: %d, X-Cache %q, want 200 MISS", first.Status, first.Header.Get("X-Cache"))
					}
				} else {
					do(t, http.MethodGet, cached.URL+path, "demo", "demo", "", hdr...)
				}
				g := do(t, http.MethodGet, cached.URL+path, "demo", "demo", "", hdr...)
				if g.Status != http.StatusOK || g.Header.Get("X-Cache") != "HIT" || g.Header.Get("ETag") == "" {
					t.Fatalf("GET: %d, X-Cache %q, ETag %q, want 200 HIT with a tag: %s", g.Status, g.Header.Get("X-Cache"), g.Header.Get("ETag"), g.Body)
				}
				if g.Header.Get("Content-Encoding") == "" && g.Header.Get("Content-Length") == "" {
					t.Fatalf("GET: no Content-Length")
				}
				h := do(t, http.MethodHead, cached.URL+path, "demo", "demo", "", hdr...)
				compare(t, "HEAD", g, h)

				g304 := do(t, http.MethodGet, cached.URL+path, "demo", "demo", "", append(hdr, "If-None-Match: "+g.Header.Get("ETag"))...)
				h304 := do(t, http.MethodHead, cached.URL+path, "demo", "demo", "", append(hdr, "If-None-Match: "+g.Header.Get("ETag"))...)
				if h304.Status != http.StatusNotModified {
					t.Errorf("HEAD with If-None-Match %s: %d, want 304", g.Header.Get("ETag"), h304.Status)
				}
				compare(t, "HEAD with If-None-Match", g304, h304)

				// The cache answers HEAD only for a proved credential, as it does GET.
				if r := do(t, http.MethodHead, cached.URL+path, "demo", "wrong", "", hdr...); r.Status != http.StatusUnauthorized {
					t.Errorf("HEAD with a wrong password: %d, X-Cache %q, want 401", r.Status, r.Header.Get("X-Cache"))
				}

				// Without a cache, HEAD is still GET without the body.
				pg := do(t, http.MethodGet, plain.URL+path, "demo", "demo", "", hdr...)
				ph := do(t, http.MethodHead, plain.URL+path, "demo", "demo", "", hdr...)
				compare(t, "HEAD without a cache", pg, ph)
			})
		}
	}
}
