package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// These tests run the binary on a Redis of several nodes, as docs/operations.md ("Redis Sentinel and Redis
// Cluster") describes: real redis-server and redis-sentinel processes, real reqgate processes.

// scrape returns the admin listener's /metrics text.
func scrape(t *testing.T, admin string) string {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitMetric waits until ok holds for the /metrics text, or fails with what.
func waitMetric(t *testing.T, admin, what string, ok func(text string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		text := scrape(t, admin)
		if ok(text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s; metrics:\n%s\n%s", what, grepLines(text, "reqgate_ratelimit_redis"),
				grepLines(text, "reqgate_cache_bus"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSentinelFailoverUnderLoad runs `serve` on the master of a Sentinel group (redis.sentinel.*) under a
// steady load of reads with a rate policy, and kills the master: the limiter falls back meanwhile, follows the
// replica the Sentinels promote (reqgate_ratelimit_redis_up back to 1 after the switch to the fallback), the
// invalidation bus subscribes on the new master (reqgate_cache_bus_up back to 1), and no client gets a 5xx or a
// broken connection throughout.
func TestSentinelFailoverUnderLoad(t *testing.T) {
	sen := redistest.StartSentinel(t, 1)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "reqgate.yaml")
	conf := "redis:\n  sentinel:\n    master: " + sen.Master + "\n" +
		"    addrs: [" + strings.Join(sen.Addrs, ", ") + "]\n" +
		"ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 100000, period: 1s}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(dir, "r.db"),
		"--config", cfg)
	waitReady(t, p, "http://"+listen+"/readyz")
	waitMetric(t, admin, "the bus up on the first master", func(m string) bool {
		return metricSum(m, "reqgate_cache_bus_up") == 1
	})

	var (
		stop                  atomic.Bool
		ok, bad, broken       atomic.Int64
		firstBad, firstBroken atomic.Value
		wg                    sync.WaitGroup
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client()
			for !stop.Load() {
				req, _ := http.NewRequest(http.MethodGet, "http://"+listen+"/api2/demo/re/1", nil)
				req.SetBasicAuth("demo", "demo")
				resp, err := c.Do(req)
				if err != nil {
					broken.Add(1)
					firstBroken.CompareAndSwap(nil, err.Error())
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 500 {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, resp.Status)
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()

	waitMetric(t, admin, "requests decided by Redis", func(m string) bool {
		return ok.Load() > 50 && metricSum(m, "reqgate_ratelimit_redis_up") == 1
	})
	old := sen.KillMaster(t)
	sen.WaitFailover(t, old.Addr)
	waitMetric(t, admin, "the fallback, then Redis again on the promoted replica", func(m string) bool {
		return metricSum(m, `reqgate_ratelimit_redis_switches_total{to="fallback"}`) >= 1 &&
			metricSum(m, `reqgate_ratelimit_redis_switches_total{to="redis"}`) >= 1 &&
			metricSum(m, "reqgate_ratelimit_redis_up") == 1
	})
	waitMetric(t, admin, "the bus up on the new master", func(m string) bool {
		return metricSum(m, "reqgate_cache_bus_up") == 1
	})
	before := ok.Load()
	waitMetric(t, admin, "more requests after the failover", func(string) bool { return ok.Load() > before+50 })
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 || broken.Load() > 0 {
		t.Fatalf("through the failover: %d answered, %d 5xx (first %v), %d broken (first %v)", ok.Load(),
			bad.Load(), firstBad.Load(), broken.Load(), firstBroken.Load())
	}
}

const clusterAccounts = `
accounts:
  - api_key: scale
    name: Scale-out test
    users:
      - {id: 1, username: writer, password: writer, email: w@scale.test, firstname: W, lastname: R}
  - api_key: limited
    name: Limited
    users:
      - {id: 1, username: writer, password: writer, email: w@limited.test, firstname: W, lastname: R}
`

// TestClusterSharesLimitsAndInvalidations runs a core and two gateways on a Redis Cluster of three masters
// (redis.cluster.addrs): a window policy of 20 requests per hour, checked with a second policy in one script,
// admits exactly 20 of 30 requests sent through both gateways (a gateway that cannot run the script allows,
// on_redis_error: allow), and a write through one gateway is seen at once by a read through the other that
// served the record from its cache just before.
func TestClusterSharesLimitsAndInvalidations(t *testing.T) {
	cl := redistest.StartCluster(t, 0)
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(clusterAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "reqgate.yaml")
	// Two policies, so that every decision runs one script on two keys; a Redis that fails allows all, so that
	// only a limit shared in Redis refuses anything.
	conf := "ratelimit:\n  on_redis_error: allow\n  policies:\n" +
		"    - {name: account, key: api_key, limit: 20, period: 1h, algorithm: window}\n" +
		"    - {name: address, key: ip, limit: 10000, period: 1h, algorithm: window}\n" +
		"  overrides:\n    - {api_key: scale, policy: account, limit: 10000, period: 1h}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	coreAddr := testbin.FreeAddr(t)
	core := start(t, "core", "--listen", coreAddr, "--admin-listen", "off", "--db", filepath.Join(dir, "core.db"),
		"--accounts", accounts, "--set", "redis.cluster.addrs="+strings.Join(cl.Addrs(), ","))
	waitReady(t, core, "http://"+coreAddr+"/readyz")
	_, gws := startGateways(t, 2, "--upstream", "http://"+coreAddr, "--config", cfg,
		"--set", "redis.cluster.addrs="+strings.Join(cl.Addrs(), ","), "--set", "cache.replica_lease=300ms")
	c := client()

	admitted, refused := 0, 0
	for i := range 30 {
		req, _ := http.NewRequest(http.MethodGet, gws[i%2]+"/api2/limited/re/1", nil)
		req.SetBasicAuth("writer", "writer")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			refused++
		case http.StatusNotFound, http.StatusOK:
			admitted++
		default:
			t.Fatalf("request %d: %s", i, resp.Status)
		}
	}
	if admitted != 20 || refused != 10 {
		t.Errorf("30 requests through two gateways under one limit of 20: %d admitted, %d refused; want 20 and 10",
			admitted, refused)
	}

	code, loc, err := call(c, http.MethodPost, gws[0]+"/api2/scale/re", titleBody("first"))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, err)
	}
	rec := loc[strings.Index(loc, "/api2/"):]
	read := func(gw string) (title, cache string) { t.Helper(); return readTitle(t, c, gw+rec) }
	// A gateway serves hits only once it has joined the bus and holds a lease: the bus works on the cluster.
	waitHits(t, gws, read)
	stale, hits := 0, 0
	for round := range 50 {
		reader, writer := gws[round%2], gws[(round+1)%2]
		read(reader) // fills the reader's cache; the second read is a hit
		if _, x := read(reader); x == "HIT" {
			hits++
		}
		title := "round " + string(rune('a'+round%26)) + string(rune('a'+round/26))
		if code, _, err := call(c, http.MethodPut, writer+rec, titleBody(title)); err != nil || code != http.StatusOK {
			t.Fatalf("round %d: write: %d %v", round, code, err)
		}
		if got, _ := read(reader); got != title {
			stale++
		}
	}
	if stale > 0 || hits < 25 {
		t.Errorf("two gateways on a cluster: %d of 50 reads after a write through the other gateway were stale "+
			"(%d of 50 warm reads hit)", stale, hits)
	}
}
