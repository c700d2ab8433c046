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

// TestReadYourWritesAcrossReplicas writes through replica A and at once reads through replica B, which has the
// read cached; each round warms B's entries again first, so every round tests a cached read. A's answer to
// the write comes only once B has applied the invalidation (B acknowledged it), so B never answers with the
// version before: not the record, and not a search, which must show a record created through A at once.
// It also checks that the invalidation had left Redis for every subscriber when A answered (a subscriber of
// the test's own, looked at without waiting, has it).
func TestReadYourWritesAcrossReplicas(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	rs := redistest.Start(t)
	a, b := startReplica(t, cachedOptions(c), rs), startReplica(t, cachedOptions(c), rs)
	waitListening(t, a, b)
	sub := subscribe(t, rs.Addr)

	const rounds = 600
	const path = "/api2/demo/re/5"
	const search = "/api2/demo/re/search?created_time%3E1000000000"
	undispatched, stale, unseen := 0, 0, 0
	for i := range rounds {
		if res := get(t, b.URL+path); res.Status != http.StatusOK {
			t.Fatalf("round %d: warm read through B: %d %q", i, res.Status, res.Body)
		}
		if i%10 != 0 {
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
		} else {
			// A search through B, cached, then a record created through A that it must show at once.
			title := "Created in round " + strconv.Itoa(i)
			q := b.URL + search
			if res := get(t, q); res.Status != http.StatusOK || strings.Contains(res.Body, title) {
				t.Fatalf("round %d: search through B before the create: %d %q", i, res.Status, res.Body)
			}
			body := `<requirement><fields><field><name>field_101</name><value>` + title + `</value></field></fields></requirement>`
			if res := do(t, http.MethodPost, a.URL+"/api2/demo/re", "demo", "demo", body); res.Status != http.StatusCreated {
				t.Fatalf("round %d: create through A: %d %q", i, res.Status, res.Body)
			}
			if !sub.pending() {
				undispatched++
			}
			if res := get(t, q); res.Status != http.StatusOK || !strings.Contains(res.Body, title) {
				unseen++
			}
		}
		if got, want := sub.next(t), " demo"; !strings.HasSuffix(got, want) {
			t.Fatalf("round %d: message %q on the channel, want one ending in %q", i, got, want)
		}
	}
	if undispatched > 0 {
		t.Errorf("%d of %d writes were answered before Redis had sent their invalidation", undispatched, rounds)
	}
	if stale > 0 {
		t.Errorf("%d of %d reads through B right after a write through A served the version before it",
			stale, rounds-rounds/10)
	}
	if unseen > 0 {
		t.Errorf("%d of %d searches through B right after a create through A did not show it", unseen, rounds/10)
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

// next returns the payload of the next invalidation on the channel, passing over the replicas' membership
// messages.
func (s *subscriber) next(t *testing.T) string {
	t.Helper()
	for {
		got := s.array(t)
		if len(got) != 3 || got[0] != "message" {
			t.Fatalf("subscription: %q, want a message", got)
		}
		if !strings.Contains(got[2], " member ") {
			return got[2]
		}
	}
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
