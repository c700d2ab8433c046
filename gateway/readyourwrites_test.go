package gateway

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestReadYourWritesAcrossReplicas writes through replica A and at once reads the record through replica B,
// which has it cached; each round warms B's entry again first, so every round tests a cached read.
//
// Two things are checked. Strictly: when A's answer to the write arrives, Redis has already sent the
// invalidation to the subscribers (a subscriber of the test's own, looked at without waiting, has it), which
// is what the gateway can guarantee. And B's answers: B applies a message as soon as its goroutine reading
// the subscription runs, but on a machine whose cores are shared that goroutine can be left waiting while B
// serves the read, so a rare old answer is allowed (one in ten); a replica that answered writes before
// Redis had their invalidation leaves most of them old.
func TestReadYourWritesAcrossReplicas(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	rs := redistest.Start(t)
	a, b := startReplica(t, cachedOptions(c), rs), startReplica(t, cachedOptions(c), rs)
	waitListening(t, a, b)
	sub := subscribe(t, rs.Addr)

	const rounds = 300
	const path = "/api2/demo/re/5"
	undispatched, stale := 0, 0
	for i := range rounds {
		if res := get(t, b.URL+path); res.Status != http.StatusOK {
			t.Fatalf("round %d: warm read through B: %d %q", i, res.Status, res.Body)
		}
		title := "Written in round " + strconv.Itoa(i)
		putTitle(t, a.URL+path, title)
		if !sub.pending() {
			undispatched++
		}
		res := get(t, b.URL+path)
		if res.Status != http.StatusOK {
			t.Fatalf("round %d: read through B: %d %q", i, res.Status, res.Body)
		}
		if !strings.Contains(res.Body, title) {
			stale++
		}
		if got, want := sub.next(t), " demo"; !strings.HasSuffix(got, want) {
			t.Fatalf("round %d: message %q on the channel, want one ending in %q", i, got, want)
		}
	}
	t.Logf("%d of %d writes answered before Redis sent the invalidation; %d reads through B were old",
		undispatched, rounds, stale)
	if undispatched > 0 {
		t.Errorf("%d of %d writes were answered before Redis had sent their invalidation", undispatched, rounds)
	}
	if stale > rounds/10 {
		t.Errorf("%d of %d reads through B right after a write through A served the version before it",
			stale, rounds)
	}
}

// subscriber is a bare Redis subscription to the invalidation channel, whose socket can be looked at
// without waiting.
type subscriber struct {
	conn *net.TCPConn
	rd   *bufio.Reader
}

func subscribe(t *testing.T, addr string) *subscriber {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial redis: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s := &subscriber{conn: c.(*net.TCPConn), rd: bufio.NewReader(c)}
	if _, err := fmt.Fprintf(c, "SUBSCRIBE %s\r\n", cache.Channel); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if got := s.array(t); len(got) != 3 || got[0] != "subscribe" {
		t.Fatalf("subscribe: reply %q", got)
	}
	return s
}

// pending reports whether Redis has sent anything not yet read, at this moment.
func (s *subscriber) pending() bool {
	if s.rd.Buffered() > 0 {
		return true
	}
	raw, err := s.conn.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	_ = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	})
	return n > 0
}

// next returns the payload of the next message on the channel.
func (s *subscriber) next(t *testing.T) string {
	t.Helper()
	got := s.array(t)
	if len(got) != 3 || got[0] != "message" {
		t.Fatalf("subscription: %q, want a message", got)
	}
	return got[2]
}

// array reads one RESP2 array of bulk strings and integers.
func (s *subscriber) array(t *testing.T) []string {
	t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	line := func() string {
		l, err := s.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read subscription: %v", err)
		}
		return strings.TrimSuffix(l, "\r\n")
	}
	head := line()
	n, err := strconv.Atoi(strings.TrimPrefix(head, "*"))
	if !strings.HasPrefix(head, "*") || err != nil {
		t.Fatalf("subscription: %q, want an array", head)
	}
	out := make([]string, 0, n)
	for range n {
		switch h := line(); {
		case strings.HasPrefix(h, "$"):
			out = append(out, line())
		case strings.HasPrefix(h, ":"):
			out = append(out, h[1:])
		default:
			t.Fatalf("subscription: unexpected %q", h)
		}
	}
	return out
}
