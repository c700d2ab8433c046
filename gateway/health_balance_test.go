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

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
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
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := fmt.Sprintf(`<requirement><fields><field><name>field_101</name><value>health %d</value></field></fields></requirement>`, i)
			posts.Add(1)
			req, _ := http.NewRequest(http.MethodPost, gw.URL+"/api2/demo/re", strings.NewReader(body))
			req.SetBasicAuth("demo", "demo")
			req.Header.Set("Content-Type", "application/xml")
			res, err := client.Do(req)
			if err != nil {
				continue
			}
			res.Body.Close()
			if res.StatusCode == http.StatusCreated {
				created.Add(1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	read := func() int {
		return do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "demo", "", "Cache-Control: no-cache").Status
	}
	if !waitUntil(10*time.Second, func() bool { return requestsTo(gw, a.Addr) > 0 && requestsTo(gw, b.Addr) > 0 }) {
		t.Fatalf("both cores should get requests: %+v", gw.Stats().Upstreams)
	}

	b.Stop()
	if !waitUntil(10*time.Second, func() bool { return !upState(gw, b.Addr) }) {
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
	if !waitUntil(10*time.Second, func() bool {
		read()
		return upState(gw, b.Addr) && requestsTo(gw, b.Addr) > sentToB
	}) {
		t.Fatalf("restarted core gets no requests: %+v", gw.Stats().Upstreams)
	}

	close(stop)
	wg.Wait()
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
	if !waitUntil(10*time.Second, func() bool { return !upState(gw, a.Addr) && !upState(gw, b.Addr) }) {
		t.Fatalf("stopped cores still up: %+v", gw.Stats().Upstreams)
	}
	if got, want := do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "demo", "").Status, http.StatusBadGateway; got != want {
		t.Errorf("all down: status got %d, want %d", got, want)
	}
	a.Restart(t)
	// Tried while still marked down: the first request after the restart may already succeed.
	if !waitUntil(10*time.Second, func() bool {
		return do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "demo", "").Status == http.StatusOK
	}) {
		t.Fatal("no success after a core came back")
	}
}

// TestPickAllOut: when every core is out, the one out the longest is tried first, then the others by the same
// order; a core that is up always wins.
func TestPickAllOut(t *testing.T) {
	b := &balancer{probing: true}
	for _, at := range []int64{300, 100, 200} {
		be := &backend{hc: &fasthttp.HostClient{Addr: "127.0.0.1:1"}}
		be.downAt.Store(at)
		b.backends = append(b.backends, be)
	}
	tried := make([]bool, 3)
	var got []int
	for range 3 {
		i := b.pick(tried)
		tried[i] = true
		got = append(got, i)
	}
	if want := []int{1, 2, 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order with all out: got %v, want %v", got, want)
	}
	b.backends[0].up.Store(true)
	if got, want := b.pick(make([]bool, 3)), 0; got != want {
		t.Errorf("with core 0 up: got %d, want %d", got, want)
	}
}
