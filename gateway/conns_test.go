package gateway

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/reqgate/reqgate/internal/testsupport"
)

// tableOn runs a connection table with lim over an in-memory listener until the test ends. It returns the
// connections the table admits, in order, and a dialer from any address.
func tableOn(t *testing.T, lim connLimits) (<-chan *conn, func(ip string) net.Conn) {
	ln := fasthttputil.NewInmemoryListener()
	l := newConnTable(ln, lim, func() []netip.Prefix { return nil }, new(atomic.Int64))
	admitted := make(chan *conn, 16)
	go func() {
		defer close(admitted)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			admitted <- c.(*conn)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	dial := func(ip string) net.Conn {
		c, err := ln.DialWithLocalAddr(&net.TCPAddr{IP: net.ParseIP(ip), Port: 40000})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return admitted, dial
}

// answer is the status of what the table wrote to a connection it refused.
func answer(t *testing.T, c net.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer from the table: %v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

// admitIn dials the table from each of ips, in turn, and moves each connection admitted to state, as its server
// would (stateServing on reading a head).
func admitIn(t *testing.T, admitted <-chan *conn, dial func(ip string) net.Conn, state uint64, ips ...string) []*conn {
	t.Helper()
	conns := make([]*conn, len(ips))
	for i, ip := range ips {
		dial(ip)
		conns[i] = next(t, admitted)
		if err := conns[i].t.move(state, 0); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}

func next(t *testing.T, admitted <-chan *conn) *conn {
	t.Helper()
	select {
	case c := <-admitted:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no connection admitted")
		return nil
	}
}

// TestConnTableShedsStuckWriter: near the cap, a connection whose answer its client has not taken for
// stuckWrite (a slow reader's pipelined answers; a tick more on the table's clock, whose stamp may be a tick
// early) is shed for a new connection of a network holding fewer, its
// blocked write interrupted; a connection being served whose write is younger, or that writes nothing, is not,
// nor is a stuck writer for a new connection of its own network.
func TestConnTableShedsStuckWriter(t *testing.T) {
	admitted, dial := tableOn(t, connLimits{max: 2, perIP: 10, perPrefix: 10})
	served := admitIn(t, admitted, dial, stateServing, "192.0.2.1", "192.0.2.1")
	table := served[0].l
	stuck := stuckWrite + table.tick().Milliseconds()
	table.clock.Store(5000)
	served[0].t.writing.Store(5000 + 1) // a write began at the table's 5000 ms and has not returned
	table.clock.Store(5000 + stuck - 1)
	if got := answer(t, dial("198.51.100.2")); got != http.StatusServiceUnavailable {
		t.Errorf("a connection while the write waits less than stuckWrite: status %d, want 503", got)
	}
	table.clock.Store(5000 + stuck)
	if got := answer(t, dial("192.0.2.2")); got != http.StatusServiceUnavailable {
		t.Errorf("a connection of the stuck writer's network: status %d, want 503", got)
	}
	dial("198.51.100.3")
	if !testsupport.WaitUntil(10*time.Second, func() bool { s, _ := unpack(served[0].t.word.Load()); return s == stateShed }) {
		t.Fatal("the table never shed the connection whose write was stuck")
	}
	table.mu.Lock()
	writesKilled := served[0].t.writesKilled
	table.mu.Unlock()
	if !writesKilled {
		t.Error("the shed writer's writes were not interrupted")
	}
	served[0].Close()
	if got := next(t, admitted).RemoteAddr().String(); got != "198.51.100.3:40000" {
		t.Errorf("admitted %s", got)
	}
	if s, _ := unpack(served[1].t.word.Load()); s != stateServing {
		t.Errorf("the connection being served without a write is in state %d", s)
	}
}

// TestConnTableShedsFairly: near the cap a new connection does not take the place of a connection of another
// network that would then hold fewer than its own: a network holding two, reopening, does not shed the one
// head of a network holding one, while a third network (holding none) does, and so does the head's own network.
func TestConnTableShedsFairly(t *testing.T) {
	for _, tt := range []struct {
		from string
		shed bool
	}{
		{"192.0.2.9", false},   // the flood's network: it would hold three against the head's one
		{"198.51.100.9", true}, // a network holding none
		{"203.0.113.9", true},  // the head's own network
	} {
		t.Run(tt.from, func(t *testing.T) {
			admitted, dial := tableOn(t, connLimits{max: 3, perIP: 10, perPrefix: 10})
			admitIn(t, admitted, dial, stateServing, "192.0.2.1", "192.0.2.2")
			head := admitIn(t, admitted, dial, stateHead, "203.0.113.1")[0]
			c := dial(tt.from)
			if !tt.shed {
				if got := answer(t, c); got != http.StatusServiceUnavailable {
					t.Errorf("status %d, want 503", got)
				}
				if s, _ := unpack(head.t.word.Load()); s != stateHead {
					t.Errorf("the head was shed (state %d)", s)
				}
				return
			}
			if !testsupport.WaitUntil(10*time.Second, func() bool { s, _ := unpack(head.t.word.Load()); return s == stateShed }) {
				t.Fatal("the head was not shed")
			}
			head.Close()
			if got := next(t, admitted).RemoteAddr().String(); got != tt.from+":40000" {
				t.Errorf("admitted %s", got)
			}
		})
	}
}

// TestConnTableKeepsLastPlaces: near the cap, a new connection that can take no one's place gets one of the last
// places only while its network holds less than its share (the places divided among the networks holding any):
// a network holding two of four places, with one other network, is refused; a third network is admitted.
func TestConnTableKeepsLastPlaces(t *testing.T) {
	admitted, dial := tableOn(t, connLimits{max: 4, perIP: 10, perPrefix: 10})
	admitIn(t, admitted, dial, stateServing, "192.0.2.1", "192.0.2.2", "198.51.100.1")
	if got := answer(t, dial("192.0.2.3")); got != http.StatusServiceUnavailable {
		t.Errorf("a third connection of the network holding two of four places: status %d, want 503", got)
	}
	dial("203.0.113.1")
	if got := next(t, admitted).RemoteAddr().String(); got != "203.0.113.1:40000" {
		t.Errorf("admitted %s", got)
	}
}

// TestConnTablePerNetwork: an IPv6 client is capped per address and per /64 (one host usually holds the whole
// /64); another /64 is not.
func TestConnTablePerNetwork(t *testing.T) {
	admitted, dial := tableOn(t, connLimits{max: 100, perIP: 1, perPrefix: 2})
	dial("2001:db8::1")
	if got := next(t, admitted).RemoteAddr().String(); got != "[2001:db8::1]:40000" {
		t.Fatalf("admitted %s", got)
	}
	for _, ip := range []string{"2001:db8::1", "2001:db8::2", "2001:db8::3"} {
		c := dial(ip)
		if ip == "2001:db8::2" {
			next(t, admitted)
			continue
		}
		if got := answer(t, c); got != http.StatusTooManyRequests {
			t.Errorf("%s: status %d, want 429", ip, got)
		}
	}
	dial("2001:db8:0:1::1")
	if got := next(t, admitted).RemoteAddr().String(); got != "[2001:db8:0:1::1]:40000" {
		t.Errorf("admitted %s, want the connection of another /64", got)
	}
}

// TestConnTableSheds: a full table refuses a new connection (503) while every place is taken by a connection
// being served, and sheds an idle one for it once there is one; the shed connection's reads fail with errShed
// (answered 503 by serverError).
func TestConnTableSheds(t *testing.T) {
	admitted, dial := tableOn(t, connLimits{max: 2, perIP: 10, perPrefix: 10})
	served := admitIn(t, admitted, dial, stateServing, "192.0.2.1", "192.0.2.1")
	if got := answer(t, dial("192.0.2.2")); got != http.StatusServiceUnavailable {
		t.Errorf("a connection while all are served: status %d, want 503", got)
	}
	served[1].t.exchanged(0) // its exchange ended: idle
	dial("192.0.2.3")
	// The table waits for the shed connection's server to let go of it: the server's read fails, it closes. An
	// in-memory connection's read, unlike a socket's, does not see a deadline set while it blocks: read once
	// the table has shed it.
	if !testsupport.WaitUntil(10*time.Second, func() bool { s, _ := unpack(served[1].t.word.Load()); return s == stateShed }) {
		t.Fatal("the table never shed the idle connection")
	}
	if _, err := served[1].Read(make([]byte, 1)); !errors.Is(err, errShed) {
		t.Fatalf("read of the shed connection: %v, want errShed", err)
	}
	served[1].Close()
	if got := next(t, admitted).RemoteAddr().String(); got != "192.0.2.3:40000" {
		t.Errorf("admitted %s", got)
	}
	if s, _ := unpack(served[0].t.word.Load()); s != stateServing {
		t.Errorf("the connection being served is in state %d", s)
	}
}
