package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestReadsThroughKilledCores runs a gateway in front of two core processes on one PostgreSQL database while
// clients read: when one core is killed (SIGKILL) every read still succeeds, through the other; when the last one
// is killed too, every request is answered 502 or 503 with Retry-After, never left without an answer.
func TestReadsThroughKilledCores(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	coreProcs, cores := startCores(t, 2, dsn, writeAccounts(t))
	_, gateways := startGateways(t, 1, "--upstream", strings.Join(cores, ","), "--set", "cache.enabled=false")
	gw := gateways[0]
	c := client()
	code, loc, err := call(c, http.MethodPost, gw+"/api2/scale/re", titleBody("read me"))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, err)
	}
	path := gw + loc[strings.Index(loc, "/api2/"):]

	var (
		mu     sync.Mutex
		reads  int
		failed []string
	)
	clients := []*http.Client{client(), client(), client(), client()}
	stop := testsupport.Workers(len(clients), func(w, _ int) bool {
		code, _, err := call(clients[w], http.MethodGet, path, "")
		mu.Lock()
		reads++
		if err != nil || code != http.StatusOK {
			failed = append(failed, fmt.Sprintf("%d %v", code, err))
		}
		mu.Unlock()
		return true
	})
	readsNow := func() int { mu.Lock(); defer mu.Unlock(); return reads }
	waitReads := func(n int) {
		if !testsupport.WaitUntil(30*time.Second, func() bool { return readsNow() >= n }) {
			t.Errorf("fewer than %d reads within 30s", n)
		}
	}
	waitReads(200)
	if err := coreProcs[0].Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitReads(readsNow() + 400)
	stop()
	if len(failed) > 0 {
		t.Errorf("%d of %d reads failed with one of two cores killed: %v", len(failed), reads, failed[:min(len(failed), 10)])
	}

	if err := coreProcs[1].Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(m, path, strings.NewReader(titleBody("x")))
		req.SetBasicAuth("writer", "writer")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s with every core killed: %v", m, err)
		}
		resp.Body.Close()
		if (resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusServiceUnavailable) ||
			resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s with every core killed: %d Retry-After %q, want 502 or 503 with Retry-After", m,
				resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}
