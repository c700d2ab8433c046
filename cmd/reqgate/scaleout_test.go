package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"

	"github.com/reqgate/reqgate/internal/testbin"
)

// These tests run reqgate scaled out, as docs/operations.md ("N gateway replicas with Redis") describes:
// several core processes on one PostgreSQL database, and gateways balancing across them with Redis, all real
// processes on loopback.

const scaleAccounts = `
accounts:
  - api_key: scale
    name: Scale-out test
    users:
      - {id: 1, username: writer, password: writer, email: w@scale.test, firstname: W, lastname: R}
`

// writeAccounts writes the account file of these tests and returns its path.
func writeAccounts(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(path, []byte(scaleAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startCores starts n `reqgate core` processes on one database and waits until each is ready. They start
// at the same moment, so they migrate and provision concurrently.
func startCores(t *testing.T, n int, dsn, accounts string) (procs []*proc, urls []string) {
	t.Helper()
	for range n {
		addr := testbin.FreeAddr(t)
		procs = append(procs, start(t, "core", "--listen", addr, "--admin-listen", "off", "--db", dsn,
			"--accounts", accounts))
		urls = append(urls, "http://"+addr)
	}
	for i, p := range procs {
		waitReady(t, p, urls[i]+"/readyz")
	}
	return procs, urls
}

// startGateways starts n `reqgate gateway` processes with args, each on a free address without an admin
// listener, and waits until each is ready.
func startGateways(t *testing.T, n int, args ...string) (procs []*proc, urls []string) {
	t.Helper()
	for range n {
		addr := testbin.FreeAddr(t)
		p := start(t, append([]string{"gateway", "--listen", addr, "--admin-listen", "off"}, args...)...)
		waitReady(t, p, "http://"+addr+"/readyz")
		procs, urls = append(procs, p), append(urls, "http://"+addr)
	}
	return procs, urls
}

// client is one caller of the interface: its own connections, a bounded wait.
func client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
}

// call sends one request as the writer user and returns the status and Location (err for a transport
// failure).
func call(c *http.Client, method, url, body string) (int, string, error) {
	r, err := testsupport.Send(c, method, url, "writer", "writer", body)
	return r.Status, r.Header.Get("Location"), err
}

func titleBody(title string) string {
	return `<requirement><fields><field><name>field_101</name><value>` + title + `</value></field></fields></requirement>`
}

// recordID returns the id at the end of a Location (…/re/17).
func recordID(loc string) (int64, error) {
	id, err := strconv.ParseInt(loc[strings.LastIndex(loc, "/")+1:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("location %q does not end in a record id: %w", loc, err)
	}
	return id, nil
}

// TestTwoCoresSharePostgres runs two core processes on one database and writes to both at once: creates
// get ids 2..n+1 each exactly once, every update of one record lands with its own version, and the field
// history holds every change, each starting from the value the one before left.
func TestTwoCoresSharePostgres(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	_, cores := startCores(t, 2, dsn, writeAccounts(t))

	c := client()
	code, loc, err := call(c, http.MethodPost, cores[0]+"/api2/scale/re", titleBody("start"))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("first create: %d %v", code, err)
	}
	if got, err := recordID(loc); err != nil || got != 1 {
		t.Fatalf("first record id = %d (%v), want 1", got, err)
	}

	const writers, creates, updates = 8, 15, 8
	var (
		mu  sync.Mutex
		ids []int64
		wg  sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			c := client()
			for i := range creates + updates {
				base := cores[(w+i)%2] + "/api2/scale/re" // alternate cores
				if i%3 == 2 && i/3 < updates {
					code, _, err := call(c, http.MethodPut, base+"/1", titleBody(fmt.Sprintf("w%dn%d", w, i)))
					if err != nil || code != http.StatusOK && code != http.StatusNoContent {
						t.Errorf("writer %d: update: %d %v", w, code, err)
					}
					continue
				}
				code, loc, err := call(c, http.MethodPost, base, titleBody(fmt.Sprintf("w%dc%d", w, i)))
				if err != nil || code != http.StatusCreated {
					t.Errorf("writer %d: create: %d %v", w, code, err)
					continue
				}
				id, err := recordID(loc)
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					continue
				}
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	slices.Sort(ids)
	want := make([]int64, len(ids))
	for i := range want {
		want[i] = int64(i + 2)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("ids handed out by the two cores = %v, want 2..%d each once", ids, len(ids)+1)
	}

	// Read the outcome straight from the database.
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acct, err := st.Account(ctx, "scale")
	if err != nil {
		t.Fatal(err)
	}
	nUpdates := 0
	for i := range creates + updates {
		if i%3 == 2 && i/3 < updates {
			nUpdates += writers
		}
	}
	r, err := st.Record(ctx, acct.ID, "re", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Version, int64(1+nUpdates); got != want {
		t.Errorf("version after %d updates = %d, want %d", nUpdates, got, want)
	}
	h, err := st.History(ctx, acct.ID, "re", 1, 101)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(h), nUpdates; got != want {
		t.Fatalf("history entries = %d, want %d (one per update)", got, want)
	}
	prev, seen := "start", map[string]bool{}
	for i, ch := range h {
		if ch.Old != prev {
			t.Errorf("history[%d].Old = %q, want %q (the New before it)", i, ch.Old, prev)
		}
		seen[ch.New] = true
		prev = ch.New
	}
	if got, want := len(seen), nUpdates; got != want {
		t.Errorf("distinct values in history = %d, want %d", got, want)
	}
	if got, want := prev, r.Values[101]; got != want {
		t.Errorf("last history value %q, record holds %q", got, want)
	}
	all, err := st.Search(ctx, acct.ID, "re", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(all), len(ids)+1; got != want {
		t.Errorf("records in the database = %d, want %d", got, want)
	}
}

// TestScaleOutSurvivesKilledCore runs two gateways in front of two cores (Redis shared by the gateways,
// PostgreSQL by the cores), writes through both gateways in parallel, and kills one core with SIGKILL in
// the middle; then restarts it and kills the other. Every acknowledged (201) write must be readable
// afterwards through both gateways, and at each kill no writer may see more than the request it had in
// flight fail.
func TestScaleOutSurvivesKilledCore(t *testing.T) {
	rds := redistest.Start(t)
	dsn := pgtest.Shared(t).NewDatabase(t)
	accounts := writeAccounts(t)
	coreProcs, cores := startCores(t, 2, dsn, accounts)
	_, gateways := startGateways(t, 2, "--upstream", strings.Join(cores, ","), "--redis", rds.URL())

	const writers = 6
	var (
		mu       sync.Mutex
		acked    []string                      // Locations of acknowledged creates
		phase    int                           // 0: core 0 is killed; 1: core 0 is back, core 1 is killed
		failures = [2]map[int][]string{{}, {}} // per phase: writer -> what failed
	)
	clients := make([]*http.Client, writers)
	for w := range clients {
		clients[w] = client()
	}
	stop := testsupport.Workers(writers, func(w, i int) bool {
		code, loc, err := call(clients[w], http.MethodPost, gateways[w%2]+"/api2/scale/re", titleBody(fmt.Sprintf("w%di%d", w, i)))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			failures[phase][w] = append(failures[phase][w], err.Error())
		case code != http.StatusCreated:
			failures[phase][w] = append(failures[phase][w], "status "+strconv.Itoa(code))
		default:
			acked = append(acked, loc)
		}
		return true
	})
	waitAcked := func(n int) {
		if !testsupport.WaitUntil(30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= n }) {
			t.Errorf("fewer than %d acknowledged writes within 30s", n)
		}
	}
	waitAcked(150)
	if err := coreProcs[0].Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	atKill := len(acked)
	mu.Unlock()
	waitAcked(atKill + 200) // the load goes on through the surviving core

	// The killed core comes back on its address, then the other one dies: the gateways must take the
	// recovered core back and send it the load, again with at most the request in flight failing.
	restarted := start(t, "core", "--listen", strings.TrimPrefix(cores[0], "http://"), "--admin-listen", "off",
		"--db", dsn, "--accounts", accounts)
	waitReady(t, restarted, cores[0]+"/readyz")
	mu.Lock()
	phase = 1
	atRestart := len(acked)
	mu.Unlock()
	waitAcked(atRestart + 100)
	if err := coreProcs[1].Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	atKill2 := len(acked)
	mu.Unlock()
	waitAcked(atKill2 + 200)
	stop()

	mu.Lock()
	defer mu.Unlock()
	for p, byWriter := range failures {
		for w, fs := range byWriter {
			if len(fs) > 1 {
				t.Errorf("kill %d: writer %d saw %d failed writes, want at most the one in flight: %v", p+1, w, len(fs), fs)
			}
		}
	}
	c := client()
	for _, loc := range acked {
		i := strings.Index(loc, "/api2/scale/")
		if i < 0 {
			t.Fatalf("Location %q does not name the record", loc)
		}
		for _, gw := range gateways {
			if code, _, err := call(c, http.MethodGet, gw+loc[i:], ""); err != nil || code != http.StatusOK {
				t.Errorf("acknowledged record %s through %s: %d %v", loc[i:], gw, code, err)
			}
		}
	}
	t.Logf("%d acknowledged writes (%d before the first kill, %d before the second) read back through both gateways; "+
		"failures per writer: %v", len(acked), atKill, atKill2, failures)
}

// TestServeOnPostgres runs `reqgate serve` on an empty PostgreSQL database: the demo account and its
// field history are provisioned there as on SQLite, and a restart does not provision them again.
func TestServeOnPostgres(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	listen := testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", "off", "--db", dsn)
	waitReady(t, p, "http://"+listen+"/readyz")
	for _, path := range []string{"/api2/demo/re/1", "/api2/demo/re/1/fieldhistory/103", "/api2/demo/re/1/related"} {
		if resp, body := do(t, http.MethodGet, "http://"+listen+path, "demo", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d; %s", path, resp.StatusCode, body)
		}
	}
	_, body := do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1/fieldhistory/103", "demo", "")
	if got, want := strings.Count(body, "<history>"), 2; got != want {
		t.Errorf("history of the demo status field has %d entries, want %d:\n%s", got, want, body)
	}
	if err := p.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	p2 := start(t, "serve", "--listen", listen, "--admin-listen", "off", "--db", dsn)
	waitReady(t, p2, "http://"+listen+"/readyz")
	_, again := do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1/fieldhistory/103", "demo", "")
	if again != body {
		t.Errorf("history changed across a restart (demo provisioned twice?):\nbefore %s\nafter  %s", body, again)
	}
}

const counterAccounts = `
accounts:
  - api_key: count
    name: Read-modify-write test
    users:
      - {id: 1, username: ann, password: ann, email: ann@count.test, firstname: A, lastname: N}
      - {id: 2, username: ben, password: ben, email: ben@count.test, firstname: B, lastname: N}
    fields:
      re:
        - {id: 101, label: Title, type: Textbox, special_purpose: title, required: true, sort: 1}
        - {id: 102, label: Count, type: Number-Integer, sort: 2}
    records:
      - {kind: re, id: 1, created_by: ann, fields: {field_101: Counter, field_102: 0}}
`

// TestReadModifyWriteScaledOut has read-modify-write clients of two users increment one field of one record
// at once through two gateways (XML and JSON) and straight at two core processes on one PostgreSQL database:
// every acknowledged increment is in the record, the version rose by one per increment and the field history
// steps by +1 with no gap, whichever replica served each write.
func TestReadModifyWriteScaledOut(t *testing.T) {
	rds := redistest.Start(t)
	dsn := pgtest.Shared(t).NewDatabase(t)
	path := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(path, []byte(counterAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	_, cores := startCores(t, 2, dsn, path)
	_, gateways := startGateways(t, 2, "--upstream", strings.Join(cores, ","), "--redis", rds.URL())
	users := [][2]string{{"ann", "ann"}, {"ben", "ben"}}
	base := func(urls []string) (b []string) {
		for _, u := range urls {
			b = append(b, u+"/api2/count")
		}
		return b
	}
	start, version := int64(0), int64(1)
	for _, tc := range []struct {
		name  string
		bases []string
		json  bool
	}{
		{"cores", base(cores), false},
		{"gateways XML", base(gateways), false},
		{"gateways JSON", base(gateways), true},
		{"all at once", append(base(cores), base(gateways)...), false},
	} {
		c := coretest.Counter{Bases: tc.bases, Users: users, Kind: "re", Root: "requirement", Field: "field_102",
			ID: 1, Clients: 6, Increments: 5, JSON: tc.json}
		res, err := coretest.RunCounter(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t.Logf("%s: %d acknowledged, %d refused as stale", tc.name, res.Acked, res.Conflicts)
		coretest.CheckCounter(t, c, start, version, res)
		start, version = res.Value, res.Version
	}
}
