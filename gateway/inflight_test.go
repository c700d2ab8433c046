package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// heldCore is the real core behind a proxy that keeps every request whose path starts with prefix waiting until
// release is called: an account's slow requests, without a clock. held counts those waiting.
type heldCore struct {
	URL     string // the proxy's: the gateway's upstream
	held    atomic.Int64
	release func()
}

func startHeldCore(t *testing.T, c *coretest.Core, prefix string) *heldCore {
	t.Helper()
	gate := make(chan struct{})
	h := &heldCore{}
	var once sync.Once
	h.release = func() { once.Do(func() { close(gate) }) }
	h.URL = frontCore(t, c.URL, func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, prefix) {
			h.held.Add(1)
			<-gate
		}
		return false
	})
	t.Cleanup(h.release)
	return h
}

// One account's slow requests fill its share of the connections to the core, never all of them: the share is
// held, that account's requests beyond it get 503 with Retry-After (in the caller's representation) without
// reaching the core, its cached reads are still served, and another account's reads and writes are all
// answered meanwhile. Once its requests finish, the account gets its share back.
func TestInflightPerAccount(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	core := startHeldCore(t, c, "/api2/acme/re/search")
	const (
		pool  = 4 // connections to the core
		share = 2 // of them, for one account
		flood = pool + 2
	)
	gw := startGateway(t, Options{Upstreams: []string{core.URL}, Cache: CacheOptions{Enabled: true},
		MaxIdleConns: pool, MaxInflightPerAccount: share, MaxConnWait: 100 * time.Millisecond})
	acme := func(path string, headers ...string) (reply, error) {
		return send(http.MethodGet, gw.URL+"/api2/acme"+path, "alice", "alice-secret", "", headers...)
	}
	// Both credentials proved, and one of acme's reads cached, before the flood.
	if res := do(t, http.MethodGet, gw.URL+"/api2/acme/re/1", "alice", "alice-secret", ""); res.Status != 200 {
		t.Fatalf("acme read: %d %s", res.Status, res.Body)
	}
	if res := do(t, http.MethodGet, gw.URL+"/api2/globex/re/1", "gina", "gina-secret", ""); res.Status != 200 {
		t.Fatalf("globex read: %d %s", res.Status, res.Body)
	}

	// acme's slow searches: more than the whole pool, each of its own (no single flight joins them).
	var answered atomic.Int64
	results := make(chan reply, flood)
	var wg sync.WaitGroup
	for i := range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := acme(fmt.Sprintf("/re/search?created_time%%3E%d", 1_700_000_000+i))
			if err != nil {
				t.Errorf("search %d: %v", i, err)
			}
			answered.Add(1)
			results <- res
		}()
	}
	defer wg.Wait()
	defer core.release()
	// Each search is either held at the core or answered; a correctness bound, not a timing check.
	if !testsupport.WaitUntil(10*time.Second, func() bool { return core.held.Load()+answered.Load() == flood }) {
		t.Fatalf("searches held at the core %d, answered %d, want %d in all", core.held.Load(), answered.Load(), flood)
	}
	if got := core.held.Load(); got != share {
		t.Errorf("acme's searches at the core: %d, want its share, %d", got, share)
	}
	for range answered.Load() {
		res := <-results
		if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" ||
			!strings.Contains(res.Body, "<error>") {
			t.Errorf("acme's search beyond its share: %d, Retry-After %q, body %q; want 503, Retry-After 1 and an <error>",
				res.Status, res.Header.Get("Retry-After"), res.Body)
		}
	}

	// While acme holds its share: one more of its requests is refused, in JSON when asked for JSON.
	res, err := acme("/re/search?created_by=1", "Accept: application/json")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || !strings.Contains(res.Body, `"error"`) {
		t.Errorf("acme's JSON search beyond its share: %d, Retry-After %q, %q %q; want 503, Retry-After 1, a JSON error",
			res.Status, res.Header.Get("Retry-After"), res.Header.Get("Content-Type"), res.Body)
	}
	// A cached read takes no slot.
	if res, err := acme("/re/1"); err != nil || res.Status != 200 || res.Header.Get("X-Cache") != "HIT" {
		t.Errorf("acme's cached read while at its share: %d X-Cache %q (%v), want 200 HIT", res.Status, res.Header.Get("X-Cache"), err)
	}
	// globex is untouched: reads that go to the core, each of its own, as many at once as its own share, round
	// after round.
	for round := range 3 {
		parallel(share, func(i int) {
			path := fmt.Sprintf("/api2/globex/re/search?created_time%%3E%d", 1_700_000_000+round*share+i)
			res, err := send(http.MethodGet, gw.URL+path, "gina", "gina-secret", "")
			if err != nil || res.Status != 200 || res.Header.Get("X-Cache") != "MISS" {
				t.Errorf("globex read %s while acme is at its share: %d X-Cache %q %q (%v), want 200 MISS",
					path, res.Status, res.Header.Get("X-Cache"), res.Body, err)
			}
		})
	}
	write := `<requirement><fields><field><name>field_101</name><value>Globex plan B</value></field></fields></requirement>`
	if res := do(t, http.MethodPut, gw.URL+"/api2/globex/re/1", "gina", "gina-secret", write); res.Status != 200 {
		t.Errorf("globex write while acme is at its share: %d %q, want 200", res.Status, res.Body)
	}

	// acme's held searches finish; its share is free again.
	core.release()
	for range share {
		if res := <-results; res.Status != 200 {
			t.Errorf("acme's held search: %d %q, want 200", res.Status, res.Body)
		}
	}
	if res, err := acme("/re/search?created_by=1"); err != nil || res.Status != 200 {
		t.Errorf("acme's search after its others finished: %d %q (%v), want 200", res.Status, res.Body, err)
	}
}

// BenchmarkInflightSlot is the cost a request to the core pays for its account's slot: enter and leave, from
// many goroutines over a few accounts.
func BenchmarkInflightSlot(b *testing.B) {
	g := &Gateway{inflight: newInflight(128)}
	accounts := []string{"acme", "globex", "initech", "umbrella"}
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		x := &exchange{}
		x.rt.APIKey = accounts[next.Add(1)%int64(len(accounts))]
		for pb.Next() {
			slot, err := g.enter(x)
			if err != nil {
				b.Error(err)
				return
			}
			g.leave(&slot)
		}
	})
}
