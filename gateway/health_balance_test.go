package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// requestsTo returns how many requests the gateway sent to the core at addr.
func requestsTo(g *testGateway, addr string) uint64 {
	for _, u := range g.Stats().Upstreams {
		if u.Addr == addr {
			return u.Requests
		}
	}
	return 0
}

// upState returns the health state the gateway holds for the core at addr.
func upState(g *testGateway, addr string) bool {
	for _, u := range g.Stats().Upstreams {
		if u.Addr == addr {
			return u.Up
		}
	}
	return false
}

// liveRecords counts the live requirements of the demo account in c's store.
func liveRecords(t *testing.T, c *coretest.Core) int {
	t.Helper()
	ctx := context.Background()
	acct, err := c.Store.Account(ctx, "demo")
	if err != nil {
		t.Fatalf("account: %v", err)
	}
	recs, err := c.Store.Search(ctx, acct.ID, "re", nil)
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	return len(recs)
}

// TestHealthChecksTakeCoreOutAndBack stops one of two cores: the health checks take it out (no request goes
// to it, every request succeeds) and put it back after a restart (it gets requests again). Meanwhile a
// stream of creates runs: no create is ever stored twice.
func TestHealthChecksTakeCoreOutAndBack(t *testing.T) {
	a := coretest.Start(t, coretest.Options{})
	b := coretest.Start(t, coretest.Options{})
	before := liveRecords(t, a) + liveRecords(t, b)
	gw := startGateway(t, Options{Upstreams: []string{a.URL, b.URL}, HealthInterval: 100 * time.Millisecond})

	// Creates run in the background through the whole test; each POST is sent by the client once.
	var posts, created atomic.Int64
	stop := testsupport.Workers(1, func(_, i int) bool {
		body := fmt.Sprintf(`<requirement><fields><field><name>field_101</name><value>health %d</value></field></fields></requirement>`, i)
		posts.Add(1)
		if res, err := send(http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo", body); err == nil && res.Status == http.StatusCreated {
			created.Add(1)
		}
		time.Sleep(5 * time.Millisecond)
		return true
	})

	read := func() int {
		return do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "demo", "", "Cache-Control: no-cache").Status
	}
	if !testsupport.WaitUntil(10*time.Second, func() bool { return requestsTo(gw, a.Addr) > 0 && requestsTo(gw, b.Addr) > 0 }) {
		t.Fatalf("both cores should get requests: %+v", gw.Stats().Upstreams)
	}

	b.Stop()
	if !testsupport.WaitUntil(10*time.Second, func() bool { return !upState(gw, b.Addr) }) {
		t.Fatalf("stopped core still up: %+v", gw.Stats().Upstreams)
	}
	// From now on, the stopped core gets nothing and every read succeeds.
	sentToB := requestsTo(gw, b.Addr)
	for i := range 50 {
		if got := read(); got != http.StatusOK {
			t.Fatalf("read %d with one core down: status %d", i, got)
		}
	}
	if got, want := requestsTo(gw, b.Addr), sentToB; got != want {
		t.Errorf("requests to the stopped core: got %d, want %d", got, want)
	}

	b.Restart(t)
	if !testsupport.WaitUntil(10*time.Second, func() bool {
		read()
		return upState(gw, b.Addr) && requestsTo(gw, b.Addr) > sentToB
	}) {
		t.Fatalf("restarted core gets no requests: %+v", gw.Stats().Upstreams)
	}

	stop()
	stored := int64(liveRecords(t, a) + liveRecords(t, b) - before)
	if stored < created.Load() || stored > posts.Load() {
		t.Errorf("creates stored: got %d, want between %d (answered 201) and %d (sent)", stored, created.Load(), posts.Load())
	}
	if created.Load() == 0 {
		t.Error("no create succeeded")
	}
}

// TestAllCoresDownStillTried takes both cores out, then brings one back: the gateway keeps trying (it answers
// 502 while they are down, never a 503 of its own) and serves again once a core answers.
func TestAllCoresDownStillTried(t *testing.T) {
	a := coretest.Start(t, coretest.Options{})
	b := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, Options{Upstreams: []string{a.URL, b.URL}, HealthInterval: 100 * time.Millisecond})
	a.Stop()
	b.Stop()
	if !testsupport.WaitUntil(10*time.Second, func() bool { return !upState(gw, a.Addr) && !upState(gw, b.Addr) }) {
		t.Fatalf("stopped cores still up: %+v", gw.Stats().Upstreams)
	}
	if got, want := do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "demo", "").Status, http.StatusBadGateway; got != want {
		t.Errorf("all down: status got %d, want %d", got, want)
	}
	a.Restart(t)
	// Tried while still marked down: the first request after the restart may already succeed.
	if !testsupport.WaitUntil(10*time.Second, func() bool {
		return do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "demo", "").Status == http.StatusOK
	}) {
		t.Fatal("no success after a core came back")
	}
}

// TestPickAllOut: when no core is up, every core that has not just refused a connection is tried, spread as if
// all were up (panic mode), never one core alone; cores that all refused a connection just now are tried the one
// refused longest ago first; a core that is up always wins.
func TestPickAllOut(t *testing.T) {
	b := &balancer{probing: true, downFor: time.Second}
	for _, at := range []int64{300, 100, 200} {
		be := &backend{hc: &fasthttp.HostClient{Addr: "127.0.0.1:1"}}
		be.downAt.Store(at)
		b.backends = append(b.backends, be)
	}

	// Out by their probes: the picks of successive requests take turns over all three.
	seen := map[int]int{}
	for range 6 {
		seen[b.pick(make([]bool, 3))]++
	}
	if len(seen) != 3 {
		t.Errorf("panic mode: 6 requests went to cores %v, want all three", seen)
	}

	// All refused a connection just now: the one refused longest ago first.
	for _, be := range b.backends {
		be.downUntil.Store(time.Now().Add(time.Hour).UnixNano())
	}
	tried := make([]bool, 3)
	var got []int
	for range 3 {
		i := b.pick(tried)
		tried[i] = true
		got = append(got, i)
	}
	if want := []int{1, 2, 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order with all refused: got %v, want %v", got, want)
	}

	b.backends[0].up.Store(true)
	b.backends[0].downUntil.Store(0)
	if got, want := b.pick(make([]bool, 3)), 0; got != want {
		t.Errorf("with core 0 up: got %d, want %d", got, want)
	}
}

// stalledReadyz is a proxy in front of a core that passes every request, and once stalled holds /readyz until its
// caller gives up: the core serves, but its health probes time out, as a busy core's did.
type stalledReadyz struct {
	URL     string
	Addr    string       // host:port, the gateway's label of this core
	stalled atomic.Bool  // hold /readyz
	probes  atomic.Int64 // /readyz requests held
}

func stallReadyz(t *testing.T, c *coretest.Core) *stalledReadyz {
	t.Helper()
	s := &stalledReadyz{}
	release := make(chan struct{})
	s.URL = frontCore(t, c.URL, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/readyz") || !s.stalled.Load() {
			return false
		}
		s.probes.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	})
	t.Cleanup(func() { close(release) })
	s.Addr = strings.TrimPrefix(s.URL, "http://")
	return s
}

// downs is how many times the gateways took the core at addr out.
func downs(addr string) uint64 {
	return metrics.GetOrCreateCounter(`reqgate_gateway_upstream_transitions_total{upstream="` + addr + `",to="down"}`).Get()
}

// readWhile reads a record through gw from clients goroutines until done returns true, and returns the statuses
// other than 200 it got. done runs while the reads still flow: once they stop, failing probes alone rightly
// take a core out, so a test looks at the cores' health in done.
func readWhile(t *testing.T, gw *testGateway, clients int, done func() bool) []int {
	t.Helper()
	var mu sync.Mutex
	var bad []int
	var stop atomic.Bool
	parallel(clients, func(int) {
		for !stop.Load() {
			r, err := send(http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "demo", "")
			mu.Lock()
			switch {
			case err != nil:
				t.Errorf("read: %v", err)
				stop.Store(true)
			case r.Status != http.StatusOK:
				bad = append(bad, r.Status)
			}
			if done() {
				stop.Store(true)
			}
			mu.Unlock()
		}
	})
	return bad
}

// TestProbeTimeoutKeepsServingCore: the probes of one core time out while its requests are answered. The core
// stays in (its answers count as much as its probes) and keeps getting its share of the requests.
func TestProbeTimeoutKeepsServingCore(t *testing.T) {
	a := coretest.Start(t, coretest.Options{})
	b := stallReadyz(t, coretest.Start(t, coretest.Options{}))
	gw := startGateway(t, Options{Upstreams: []string{a.URL, b.URL}, HealthInterval: 100 * time.Millisecond,
		HealthTimeout: 100 * time.Millisecond})
	// The first read has the core verify the credential (a bcrypt): the probes stall once it is done, as in a
	// gateway that has served for a while.
	get(t, gw.URL+"/api2/demo/re/1")
	b.stalled.Store(true)
	sentToB, downs0 := requestsTo(gw, b.Addr), downs(b.Addr)
	// Many more failed probes than take a silent core out.
	var down uint64
	var up bool
	bad := readWhile(t, gw, 2, func() bool {
		if b.probes.Load() <= 2*healthFailures {
			return false
		}
		down, up = downs(b.Addr)-downs0, upState(gw, b.Addr)
		return true
	})
	if len(bad) > 0 {
		t.Errorf("statuses other than 200: %v", bad)
	}
	if down != 0 || !up {
		t.Errorf("core with timing-out probes but answered requests taken out %d times (up: %v)", down, up)
	}
	if requestsTo(gw, b.Addr) == sentToB {
		t.Error("the core whose probes time out got no requests")
	}
}

// TestAllProbesFailingStillServes: the probes of both cores time out while both answer requests. The gateway
// answers every request, takes neither core out and keeps using both.
func TestAllProbesFailingStillServes(t *testing.T) {
	a := stallReadyz(t, coretest.Start(t, coretest.Options{}))
	b := stallReadyz(t, coretest.Start(t, coretest.Options{}))
	gw := startGateway(t, Options{Upstreams: []string{a.URL, b.URL}, HealthInterval: 100 * time.Millisecond,
		HealthTimeout: 100 * time.Millisecond})
	get(t, gw.URL+"/api2/demo/re/1") // the credential verified, as in TestProbeTimeoutKeepsServingCore
	downs0 := [2]uint64{downs(a.Addr), downs(b.Addr)}
	a.stalled.Store(true)
	b.stalled.Store(true)
	var down [2]uint64
	bad := readWhile(t, gw, 4, func() bool {
		if a.probes.Load() <= 2*healthFailures || b.probes.Load() <= 2*healthFailures {
			return false
		}
		down = [2]uint64{downs(a.Addr) - downs0[0], downs(b.Addr) - downs0[1]}
		return true
	})
	if len(bad) > 0 {
		t.Errorf("statuses other than 200 while both cores answer: %v", bad)
	}
	for i, c := range []*stalledReadyz{a, b} {
		if down[i] != 0 {
			t.Errorf("core %s taken out %d times while it answered requests", c.Addr, down[i])
		}
		if requestsTo(gw, c.Addr) == 0 {
			t.Errorf("core %s got no requests", c.Addr)
		}
	}
}

// TestSlowStart restarts one of two cores: once back, it gets fewer than half of the requests at first, and its
// share grows to half by the end of the slow start.
func TestSlowStart(t *testing.T) {
	const window = 3 * time.Second
	a := coretest.Start(t, coretest.Options{})
	b := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, Options{Upstreams: []string{a.URL, b.URL}, HealthInterval: 20 * time.Millisecond,
		SlowStart: window})
	read := func() {
		t.Helper()
		if got := get(t, gw.URL+"/api2/demo/re/1").Status; got != http.StatusOK {
			t.Fatalf("read: status %d", got)
		}
	}
	// batch sends n reads one after the other and returns how many reached b.
	batch := func(n int) uint64 {
		t.Helper()
		before := requestsTo(gw, b.Addr)
		for range n {
			read()
		}
		return requestsTo(gw, b.Addr) - before
	}
	read() // the credential verified: from now on each read is one request to a core
	if got := batch(20); got != 10 {
		t.Fatalf("before the restart: %d of 20 reads to core b, want 10 (equal shares)", got)
	}

	b.Stop()
	if !testsupport.WaitUntil(10*time.Second, func() bool { return !upState(gw, b.Addr) }) {
		t.Fatalf("stopped core still up: %+v", gw.Stats().Upstreams)
	}
	b.Restart(t)
	if !testsupport.WaitUntil(10*time.Second, func() bool { return upState(gw, b.Addr) }) {
		t.Fatalf("restarted core not back: %+v", gw.Stats().Upstreams)
	}
	first := batch(20)
	if first == 0 || first >= 10 {
		t.Errorf("first reads after the core came back: %d of 20 to it, want some but fewer than half", first)
	}
	time.Sleep(window) // past the end of the slow start
	if last := batch(20); last != 10 || last <= first {
		t.Errorf("after the slow start: %d of 20 reads to the restarted core, want 10 (first batch: %d)", last, first)
	}
}
