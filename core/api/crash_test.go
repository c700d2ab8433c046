package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// crashChildEnv names the database file when the test binary runs as the crash test's child core.
const crashChildEnv = "REQGATE_API_CRASH_CHILD_DB"

// TestCrashChildProcess is not a test of its own: run by TestAcknowledgedCreatesSurviveKill with
// crashChildEnv set, it serves the API over the given database, prints its address and waits to be killed.
func TestCrashChildProcess(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		return // a normal test run: nothing to do
	}
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("listening", ln.Addr().String())
	opt := coretest.APIOptions()
	opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := api.New(st, opt)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	http.Serve(ln, srv) //nolint:errcheck // runs until killed
	os.Exit(3)
}

// Every create acknowledged with 201 survives kill -9 of the core in the middle of a stream of creates.
func TestAcknowledgedCreatesSurviveKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(context.Background(), testProvision(t)); err != nil {
		t.Fatal(err)
	}
	st.Close()

	cmd, out := testsupport.Child(t, "TestCrashChildProcess", crashChildEnv+"="+path)
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("child core did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, out)

	const killAfter = 150 // acknowledged creates before the kill
	var (
		mu    sync.Mutex
		acked = map[int64]string{} // id -> title
		kill  = make(chan struct{})
		once  sync.Once
	)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	stop := testsupport.Workers(4, func(w, i int) bool {
		title := "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
		res, err := testsupport.Send(client, "POST", "http://"+addr+"/api/acme/re", "alice", "alice-secret", body("requirement", "field_101", title))
		if err != nil {
			return false // the core is gone
		}
		if res.Status != http.StatusCreated {
			t.Errorf("create: status %d", res.Status)
			return false
		}
		loc := res.Header.Get("Location")
		id, err := strconv.ParseInt(loc[strings.LastIndexByte(loc, '/')+1:], 10, 64)
		if err != nil {
			t.Errorf("Location %q: %v", loc, err)
			return false
		}
		mu.Lock()
		acked[id] = title
		n := len(acked)
		mu.Unlock()
		if n >= killAfter {
			once.Do(func() { close(kill) })
		}
		return true
	})
	<-kill
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	stop()

	st, err = sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer st.Close()
	a, err := st.Account(context.Background(), keyAcme)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for id, title := range acked {
		rec, err := st.Record(context.Background(), a.ID, "re", id)
		if err != nil {
			t.Errorf("acknowledged RE-%d lost: %v", id, err)
			continue
		}
		if got := rec.Values[101]; got != title {
			t.Errorf("RE-%d title %q, want %q", id, got, title)
		}
	}
	t.Logf("%d acknowledged creates checked after kill -9", len(acked))
}
