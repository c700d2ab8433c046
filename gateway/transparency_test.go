package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestTransparency sends every read of docs/api.md (and the usual failures) to the core and through the
// gateway, twice (a miss, then a hit), and compares status, the headers that matter and the body.
func TestTransparency(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	for _, tc := range []struct {
		name       string
		path       string
		user, pass string
		wantStatus int
		wantCache  string // X-Cache of the second read through the gateway; "" = no X-Cache
	}{
		{"record v2", "/api2/demo/re/1", "demo", "demo", 200, "HIT"},
		{"record v1", "/api/demo/re/1", "demo", "demo", 200, "HIT"},
		{"feature", "/api2/demo/ft/2", "demo", "demo", 200, "HIT"},
		{"use case", "/api2/demo/uc/3", "demo", "demo", 200, "HIT"},
		{"custom record", "/api2/demo/risk/1", "demo", "demo", 200, "HIT"},
		{"fields", "/api2/demo/re/field", "demo", "demo", 200, "HIT"},
		{"custom fields", "/api2/demo/risk/field", "demo", "demo", 200, "HIT"},
		{"objects", "/api2/demo/object", "demo", "demo", 200, "HIT"},
		{"users", "/api2/demo/user", "demo", "demo", 200, "HIT"},
		{"user by id", "/api2/demo/user/2", "demo", "demo", 200, "HIT"},
		{"user by email", "/api2/demo/user/team@reqgate.test", "demo", "demo", 200, "HIT"},
		{"user by encoded email", "/api2/demo/user/team%40reqgate.test", "demo", "demo", 200, "HIT"},
		{"views", "/api2/demo/re/view", "demo", "demo", 200, "HIT"},
		{"view", "/api2/demo/re/view/1", "demo", "demo", 200, "HIT"},
		{"view search", "/api2/demo/re/view/1/search?created_by=1", "demo", "demo", 200, "HIT"},
		{"search raw op", "/api2/demo/re/search?created_time>1735800000", "demo", "demo", 200, "HIT"},
		{"search encoded op", "/api2/demo/re/search?created_time%3E1735800000", "demo", "demo", 200, "HIT"},
		{"search picklist", "/api2/demo/re/search?field_103=1", "demo", "demo", 200, "HIT"},
		{"related", "/api2/demo/re/1/related", "demo", "demo", 200, "HIT"},
		{"history", "/api2/demo/risk/1/fieldhistory/402", "demo", "demo", 200, "HIT"},
		{"missing record", "/api2/demo/re/9999", "demo", "demo", 404, "MISS"},
		{"v2 only under v1", "/api/demo/re/view", "demo", "demo", 404, "MISS"},
		{"unknown path", "/api2/demo/nothing/here/at/all", "demo", "demo", 404, ""},
		{"wrong password", "/api2/demo/re/1", "demo", "nope", 401, "MISS"},
		{"no credentials", "/api2/demo/re/1", "", "", 401, "MISS"},
		{"unknown key", "/api2/nosuchkey/re/1", "demo", "demo", 401, "MISS"},
		{"not the api", "/elsewhere", "demo", "demo", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct := do(t, http.MethodGet, c.URL+tc.path, tc.user, tc.pass, "")
			if got, want := direct.Status, tc.wantStatus; got != want {
				t.Fatalf("core status=%d, want %d (body %q)", got, want, direct.Body)
			}
			for i, wantCache := range []string{"", tc.wantCache} {
				via := do(t, http.MethodGet, gw.URL+tc.path, tc.user, tc.pass, "")
				if got, want := via.Status, direct.Status; got != want {
					t.Errorf("read %d: status=%d, want %d", i, got, want)
				}
				if got, want := via.Body, direct.Body; got != want {
					t.Errorf("read %d: body differs:\n got %q\nwant %q", i, got, want)
				}
				for _, h := range []string{"Content-Type", "WWW-Authenticate", "Cache-Control"} {
					want := direct.Header.Get(h)
					if h == "Cache-Control" && tc.wantStatus == 200 {
						want = cacheControlRead // the gateway's own: private to the caller, revalidated
					}
					if got := via.Header.Get(h); got != want {
						t.Errorf("read %d: %s=%q, want %q", i, h, got, want)
					}
				}
				if via.Header.Get("X-Request-Id") == "" {
					t.Errorf("read %d: no X-Request-Id", i)
				}
				if i == 1 {
					if got, want := via.Header.Get("X-Cache"), wantCache; got != want {
						t.Errorf("X-Cache=%q, want %q", got, want)
					}
					if wantCache != "" && via.Header.Get("Age") == "" {
						t.Errorf("no Age on a cacheable read")
					}
				}
			}
		})
	}
}

// TestWritesThroughGateway creates, updates and deletes a record through the gateway: the statuses are the
// core's, Location names the gateway, and every read after a write shows the write at once.
func TestWritesThroughGateway(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))

	const create = `<requirement><fields><field><name>field_101</name><value>Gateway written</value></field></fields></requirement>`
	for _, v := range []string{"api", "api2"} {
		t.Run(v, func(t *testing.T) {
			res := do(t, http.MethodPost, gw.URL+"/"+v+"/demo/re", "demo", "demo", create)
			if got, want := res.Status, http.StatusCreated; got != want {
				t.Fatalf("create status=%d, want %d (%s)", got, want, res.Body)
			}
			loc := res.Header.Get("Location")
			if prefix := gw.URL + "/" + v + "/demo/re/"; !strings.HasPrefix(loc, prefix) {
				t.Fatalf("Location=%q, want prefix %q", loc, prefix)
			}
			path := strings.TrimPrefix(loc, gw.URL)

			first := get(t, gw.URL+path)
			if first.Status != http.StatusOK || !strings.Contains(first.Body, "Gateway written") {
				t.Fatalf("read after create: %d %q", first.Status, first.Body)
			}
			if got := get(t, gw.URL+path).Header.Get("X-Cache"); got != "HIT" {
				t.Fatalf("second read X-Cache=%q, want HIT", got)
			}
			update := `<requirement><fields><field><name>field_101</name><value>Gateway updated</value></field></fields></requirement>`
			if res := do(t, http.MethodPut, gw.URL+path, "demo", "demo", update); res.Status != http.StatusOK {
				t.Fatalf("update status=%d (%s)", res.Status, res.Body)
			}
			after := get(t, gw.URL+path)
			if !strings.Contains(after.Body, "Gateway updated") {
				t.Fatalf("read after update shows the old version: X-Cache=%s %q", after.Header.Get("X-Cache"), after.Body)
			}
			if res := do(t, http.MethodDelete, gw.URL+path, "demo", "demo", ""); res.Status != http.StatusOK {
				t.Fatalf("delete status=%d (%s)", res.Status, res.Body)
			}
			if got, want := get(t, gw.URL+path).Status, http.StatusNotFound; got != want {
				t.Fatalf("read after delete status=%d, want %d", got, want)
			}
		})
	}
}
