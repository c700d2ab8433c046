package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// TestTTLByRoute checks cache.ttl_by_route against a write made straight to the upstream, which the gateway
// never hears of: a record read, its route's TTL (10s) past, is asked of the upstream again and shows the
// write, while a search, under cache.ttl (30s), is still served from the cache, without the record the other
// client created, until cache.ttl has passed too.
func TestTTLByRoute(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	clk := testsupport.NewClock(time.Now())
	opt := cachedOptions(c)
	opt.Now = clk.Now
	opt.Cache.TTL = 30 * time.Second
	opt.Cache.TTLByRoute = map[route.Class]time.Duration{route.Record: 10 * time.Second}
	gw := startGateway(t, opt)

	const record, search = "/api2/demo/re/1", "/api2/demo/re/search?created_time%3E1000000000"
	const renamed, created = "Renamed by another client", "Created by another client"
	get(t, gw.URL+record)
	get(t, gw.URL+search)

	// Another client writes to the upstream directly.
	put := `<requirement><fields><field><name>field_101</name><value>` + renamed + `</value></field></fields></requirement>`
	if res := do(t, http.MethodPut, c.URL+record, "demo", "demo", put); res.Status != http.StatusOK {
		t.Fatalf("update at the upstream: %d %q", res.Status, res.Body)
	}
	post := `<requirement><fields><field><name>field_101</name><value>` + created + `</value></field></fields></requirement>`
	if res := do(t, http.MethodPost, c.URL+"/api2/demo/re", "demo", "demo", post); res.Status != http.StatusCreated {
		t.Fatalf("create at the upstream: %d %q", res.Status, res.Body)
	}

	clk.Add(15 * time.Second)
	if res := get(t, gw.URL+record); res.Header.Get("X-Cache") != "MISS" || !strings.Contains(res.Body, renamed) {
		t.Errorf("record past its route's TTL: X-Cache %q, renamed %v; want MISS with the other client's write",
			res.Header.Get("X-Cache"), strings.Contains(res.Body, renamed))
	}
	if res := get(t, gw.URL+search); res.Header.Get("X-Cache") != "HIT" || strings.Contains(res.Body, created) {
		t.Errorf("search within cache.ttl: X-Cache %q, created %v; want a HIT without it (the documented staleness)",
			res.Header.Get("X-Cache"), strings.Contains(res.Body, created))
	}
	// A caller that must see the upstream's own answer says so.
	if res := get(t, gw.URL+search, "Cache-Control: no-cache"); !strings.Contains(res.Body, created) {
		t.Errorf("search with Cache-Control: no-cache lacks the other client's record")
	}
	clk.Add(20 * time.Second)
	if res := get(t, gw.URL+search); !strings.Contains(res.Body, created) {
		t.Errorf("search past cache.ttl lacks the other client's record (X-Cache %q)", res.Header.Get("X-Cache"))
	}
}
