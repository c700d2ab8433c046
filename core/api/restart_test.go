package api_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestStoreRestartUnderLoad restarts PostgreSQL (a fast shutdown, as an operator's restart or a failover does)
// while clients read, update and create records: whatever fails while it is away is 503 with Retry-After, never
// 500, and the core serves again once it is back.
func TestStoreRestartUnderLoad(t *testing.T) {
	srv, st := ownPostgres(t)
	var logs testsupport.LockedBuffer
	e := serve(t, st, api.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	const workers = 6
	var (
		ok, unavailable atomic.Int64
		mu              sync.Mutex
		bad             []string // answers that are neither success nor 503 with Retry-After
	)
	paths := make([]string, workers)
	for w := range paths {
		paths[w] = "/api2/" + keyAcme + "/re/" + e.create("/api2", "re", body("requirement", "field_101", "start"))
	}
	stop := testsupport.Workers(workers, func(w, i int) bool {
		path := paths[w]
		r := req{Path: path}
		switch i % 5 {
		case 3:
			r = req{Path: "/api2/" + keyAcme + "/re/search?created_time>1000000000"}
		case 4:
			r = req{Path: "/api2/" + keyAcme + "/user"}
		case 1:
			r = req{Method: "PUT", Path: path, Body: body("requirement", "field_101", fmt.Sprintf("w%d-%d", w, i))}
		case 2:
			r = req{Method: "POST", Path: "/api2/" + keyAcme + "/re", Body: body("requirement", "field_101", "new")}
		}
		got, err := e.send(r)
		switch {
		case err != nil:
			mu.Lock()
			bad = append(bad, err.Error())
			mu.Unlock()
		case got.Status < 300:
			ok.Add(1)
		case got.Status == http.StatusServiceUnavailable && got.Header.Get("Retry-After") != "":
			unavailable.Add(1)
		default:
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s %s: %d Retry-After %q %s", r.Method, r.Path, got.Status,
				got.Header.Get("Retry-After"), strings.TrimSpace(got.Body)))
			mu.Unlock()
		}
		return true
	})
	waitOK := func(n int64) {
		t.Helper()
		if !testsupport.WaitUntil(60*time.Second, func() bool { return ok.Load() >= n }) {
			stop()
			t.Fatalf("fewer than %d successful requests within 60s (%d 503s); log:\n%s", n, unavailable.Load(), logs.String())
		}
	}
	waitOK(200)
	for range 2 {
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		waitOK(ok.Load() + 200) // served again once PostgreSQL is back
	}
	stop()
	if len(bad) > 0 {
		t.Errorf("%d answers during two PostgreSQL restarts were not success or 503 with Retry-After, e.g.:\n%s\nlog:\n%s",
			len(bad), strings.Join(bad[:min(len(bad), 10)], "\n"), internalErrors(logs.String()))
	}
	t.Logf("%d successful requests, %d answered 503 with Retry-After", ok.Load(), unavailable.Load())
}

// internalErrors are the log lines of 500s.
func internalErrors(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "internal error") && len(out) < 20 {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
