package main

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestReadYourWritesPausedGateway runs one core and three gateways on one Redis, as a load balancer would
// spread one user's requests over them, and checks 600 write-then-read pairs: each pair first caches the
// record on the reading gateway, writes it through another, then reads it through the first. None may show
// the version before the write: while all three run, while one is frozen (SIGSTOP: it can neither apply nor
// acknowledge, so the first write after the freeze waits out its lease and evicts it), and after it resumes
// (its lease ran out while it was frozen, so its first reads go to the core until it has caught up).
func TestReadYourWritesPausedGateway(t *testing.T) {
	rds := redistest.Start(t)
	coreAddr := testbin.FreeAddr(t)
	core := start(t, "core", "--listen", coreAddr, "--admin-listen", "off",
		"--db", filepath.Join(t.TempDir(), "core.db"), "--accounts", writeAccounts(t))
	waitReady(t, core, "http://"+coreAddr+"/readyz")
	procs, gws := startGateways(t, 3, "--upstream", "http://"+coreAddr, "--redis", rds.URL(),
		"--set", "cache.replica_lease=300ms")
	c := client()

	code, loc, err := call(c, http.MethodPost, gws[0]+"/api2/scale/re", titleBody("first"))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, err)
	}
	rec := loc[strings.Index(loc, "/api2/"):]
	read := func(gw string) (title, cache string) { t.Helper(); return readTitle(t, c, gw+rec) }
	// Every gateway serves hits once it has joined the bus.
	waitHits(t, gws, read)

	round := 0
	pairs := func(n int, live []int) (stale, hits int) {
		t.Helper()
		for range n {
			round++
			reader, writer := live[round%len(live)], live[(round+1)%len(live)]
			read(gws[reader]) // fills the reader's cache; the second read is a hit
			if _, x := read(gws[reader]); x == "HIT" {
				hits++
			}
			title := "round " + strconv.Itoa(round)
			if code, _, err := call(c, http.MethodPut, gws[writer]+rec, titleBody(title)); err != nil || code != http.StatusOK {
				t.Fatalf("round %d: write through gateway %d: %d %v", round, writer, code, err)
			}
			if got, _ := read(gws[reader]); got != title {
				stale++
			}
		}
		return stale, hits
	}

	if stale, hits := pairs(200, []int{0, 1, 2}); stale > 0 || hits < 100 {
		t.Errorf("three gateways: %d of 200 reads after a write through another gateway were stale (%d of 200 warm reads hit)", stale, hits)
	}

	frozen := procs[2].Cmd.Process
	if err := frozen.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, frozen.Pid)
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = frozen.Signal(syscall.SIGCONT)
		}
	})
	if stale, hits := pairs(200, []int{0, 1}); stale > 0 || hits < 100 {
		t.Errorf("one gateway frozen: %d of 200 reads after a write were stale (%d of 200 warm reads hit)", stale, hits)
	}

	if err := frozen.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	// The resumed gateway had the record cached before the freeze, and it has changed 200 times since.
	if got, x := read(gws[2]); got != "round "+strconv.Itoa(round) {
		t.Errorf("the resumed gateway's first read: %q (%s), want the last write %q", got, x, "round "+strconv.Itoa(round))
	}
	if stale, _ := pairs(200, []int{0, 1, 2}); stale > 0 {
		t.Errorf("after the resume: %d of 200 reads after a write were stale", stale)
	}
}

// readTitle reads the record at url as the writer user and returns its title (field_101) and its X-Cache.
func readTitle(t *testing.T, c *http.Client, url string) (title, cache string) {
	t.Helper()
	r := testsupport.Do(t, c, http.MethodGet, url, "writer", "writer", "")
	if r.Status != http.StatusOK {
		t.Fatalf("read %s: %d %s", url, r.Status, r.Body)
	}
	_, after, _ := strings.Cut(r.Body, "<name>field_101</name>")
	_, after, _ = strings.Cut(after, "<value>")
	title, _, _ = strings.Cut(after, "</value>")
	return title, r.Header.Get("X-Cache")
}

// waitHits waits until read through every gateway is a cache hit: a gateway serves hits only once it has
// joined the invalidation bus and holds a lease.
func waitHits(t *testing.T, gws []string, read func(gw string) (title, cache string)) {
	t.Helper()
	for _, gw := range gws {
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, x := read(gw); x == "HIT" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never served a hit: its bus never came up", gw)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
