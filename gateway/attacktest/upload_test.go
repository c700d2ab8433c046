package attacktest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestUploadsDoNotExhaustMemory plays the attacker who opens thousands of connections, each announcing a 1 MiB
// body and sending one byte of it, from 25 addresses, each in a /24 of its own (so that the per-address and
// per-network connection caps alone do not stop it). Half the connections carry a valid credential (a tenant's user attacking), half none. The real
// binary (`reqgate serve`, no race detector) must keep its memory bounded: the resident set grows by less than
// 200 MB, and a normal cached read is still answered meanwhile (its latency is logged, for docs/security.md).
func TestUploadsDoNotExhaustMemory(t *testing.T) {
	const conns, addresses = 5000, 25
	raiseFileLimit(t, 2*conns+1000)
	p, addr := testbin.Serve(t, "REQGATE_LOG_LEVEL=warn")
	base := "http://" + addr
	read := base + "/api2/demo/re/1"
	for range 2 {
		if r := call(t, local, "GET", read, "demo", "demo", ""); r.Status != 200 {
			t.Fatalf("warm-up read: %d", r.Status)
		}
	}
	before := procStatus(t, p.Cmd.Process.Pid, "VmRSS")

	var mu sync.Mutex
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	for a := range addresses {
		wg.Go(func() {
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+a), 1)}}
			for i := range conns / addresses {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					t.Errorf("dial %d from address %d: %v", i, a, err)
					return
				}
				auth := ""
				if i%2 == 0 {
					auth = "Authorization: Basic ZGVtbzpkZW1v\r\n" // demo:demo
				}
				fmt.Fprintf(c, "POST /api2/demo/re HTTP/1.1\r\nHost: gw\r\n%sContent-Type: application/xml\r\n"+
					"Content-Length: %d\r\n\r\n<", auth, 1<<20)
				mu.Lock()
				open = append(open, c)
				mu.Unlock()
			}
		})
	}
	// A normal caller meanwhile.
	var slowest time.Duration
	stop := make(chan struct{})
	var reads sync.WaitGroup
	reads.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			start := time.Now()
			r, err := send(local, "GET", read, "demo", "demo", "")
			if err != nil {
				t.Errorf("normal read during the attack: %v", err)
			} else if r.Status != 200 {
				t.Errorf("normal read during the attack: %d", r.Status)
			}
			slowest = max(slowest, time.Since(start))
		}
	})
	wg.Wait()
	time.Sleep(2 * time.Second) // the gateway reads what it will of every connection
	close(stop)
	reads.Wait()
	peak := procStatus(t, p.Cmd.Process.Pid, "VmHWM")
	mu.Lock()
	n := len(open)
	mu.Unlock()
	growth := peak - before
	t.Logf("%d connections announcing 1 MiB each: resident set %d MB before, peak %d MB (+%d MB); slowest normal read %v",
		n, before>>20, peak>>20, growth>>20, slowest.Round(time.Millisecond))
	if growth >= 200<<20 {
		t.Errorf("the resident set grew by %d MB under %d announced uploads, want < 200 MB", growth>>20, n)
	}
}

// procStatus reads a size field (kB) of /proc/<pid>/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// raiseFileLimit lifts this process's open-file limit to at least n (the connections of the attack).
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	if l.Cur >= n {
		return
	}
	l.Cur = min(max(n, l.Cur), l.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur < n {
		t.Fatalf("open-file limit %d (hard %d) is below the %d this test needs: %v", l.Cur, l.Max, n, err)
	}
}
