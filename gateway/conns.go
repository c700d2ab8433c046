package gateway

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/ratelimit"
)

// openConns is the number of connections open in every connection table of the process
// (reqgate_gateway_connections_open).
var openConns atomic.Int64

// Prefix lengths under which client addresses share the per-network connection cap: an IPv4 /24, an IPv6 /64
// (one host or one site usually holds the whole of either, so its addresses are one client's).
const (
	connPrefix4 = 24
	connPrefix6 = 64
)

// connLimits are what the connection table enforces.
type connLimits struct {
	max         int           // open connections in all
	perIP       int           // of one client address
	perPrefix   int           // of one client network (connPrefix4, connPrefix6)
	headTimeout time.Duration // to receive a request head; 0 = no bound of its own
	// The server's timeouts (Options.ReadTimeout, WriteTimeout, IdleTimeout); 0 = none, an idle timeout of 0
	// is the read timeout, as in fasthttp.
	readTimeout, writeTimeout, idleTimeout time.Duration
}

// timeouts are the limits the sweeper holds connections to, in the table's milliseconds; 0 = none.
type timeouts struct {
	head, idle, write int64
}

// timeouts are the table's limits: a head (and a new connection's TLS handshake) within the head timeout and
// the read timeout, whichever is shorter; an idle kept-alive connection within the idle timeout; each write
// within the write timeout. The server itself runs without timeouts: each of its three would read the clock
// and move a socket deadline for every request, where the table's clock costs a request an atomic load. A
// request's body is read under deadlines the handler sets (body.go).
func (lim connLimits) timeouts() timeouts {
	head := shortest(lim.headTimeout, lim.readTimeout)
	idle := lim.idleTimeout
	if idle <= 0 {
		idle = lim.readTimeout
	}
	return timeouts{head: head.Milliseconds(), idle: idle.Milliseconds(), write: lim.writeTimeout.Milliseconds()}
}

// tick is how often the sweeper looks at the table, an eighth of the shortest timeout (a quarter second at most):
// a connection is closed within two ticks past its timeout (one for the stamp of its state, one for the sweep).
func (lim connLimits) tick() time.Duration {
	d := shortest(lim.headTimeout, lim.readTimeout, lim.writeTimeout, lim.idleTimeout)
	if d <= 0 {
		return 250 * time.Millisecond
	}
	return min(max(d/8, 5*time.Millisecond), 250*time.Millisecond)
}

// shortest is the shortest of the timeouts ds that are set (> 0); 0 when none is.
func shortest(ds ...time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		if d > 0 && (m == 0 || d < m) {
			m = d
		}
	}
	return m
}

// connTable is the listener of the public port: it keeps a record of every connection it accepted and is where
// the connection limits hold, so that no client, however many addresses it has, can take the connections
// (and the memory each holds) that others need.
//
//   - A client address holds at most perIP connections, a client network (/24, /64) at most perPrefix. Trusted
//     proxies are exempt: every caller behind them shares their address. A connection over either cap is
//     answered 429 and closed at once.
//   - A request head must arrive whole within headTimeout (and the read timeout), counted from the head's
//     first byte or, on a new connection, from its acceptance (the TLS handshake included); a connection whose
//     head is late gets 408 and is closed, as HAProxy's "timeout http-request" does. An idle kept-alive
//     connection is closed after the idle timeout, a write that has not ended after the write timeout
//     (timeouts).
//   - Near the global cap (its last sixteenth), each new connection first takes the place of a sheddable one:
//     a connection the server waits on for a request head or reads one from, an idle kept-alive one, or one
//     whose client has not taken an answer's bytes for stuckWrite (a write blocked that long). Of those, the
//     ones of the networks holding the most connections go first, the oldest (by when their head, idleness or
//     blocked write began) of equals first (shedOne), and never one of a network that would then hold fewer
//     than the new connection's (choose). A connection whose request is being served is otherwise
//     never shed, nor one the server has not read yet (its head may be waiting for a busy server). So a flood
//     of unfinished heads, or of pipelined requests whose answers are read at a trickle, from many addresses
//     costs the flood its own oldest connections, not the new, well-behaved client its place. A new connection
//     that can take no one's place gets one of the last places only while its network holds less than its
//     share (overShare).
//     A connection keeps its place until its server has let go of it; a full table waits a moment for a place
//     about to come back, and only when every place it may take is taken by a connection being served, or its
//     network holds its share of the last places, is a new one refused (503).
//
// A connection moves between its states on the goroutine that serves it: its first read, the line guard
// (strictconn.go), which reports the start and end of each head, and the server's ConnState hook, the end of
// each exchange. Those are a few atomic operations per request, stamped with the table's own clock, advanced
// by its sweeper: no request reads the system clock for it (an accept does, once per connection). The sweeper
// closes the connections past a timeout; shedding happens on accept.
type connTable struct {
	net.Listener
	connLimits
	exempt  func() []netip.Prefix // the trusted proxies in force
	open    *atomic.Int64         // the gateway's count of open connections (Stats)
	refusal []byte                // written to a connection over a cap; nil closes it without a word (TLS)
	full    []byte                // written to a connection refused at the global cap; nil: none (TLS)

	// The table's clock counts the milliseconds since start that the process ran: a stall (the process stopped,
	// a VM paused) is left out, so that heads whose bytes arrived meanwhile are not taken for late. clock is its
	// reading at the sweeper's last tick; stalled the time left out.
	start   time.Time
	clock   atomic.Int64
	stalled atomic.Int64 // nanoseconds

	mu      sync.Mutex
	all     []*connTrack // open connections; each knows its index
	perAddr map[netip.Addr]int
	perNet  map[netip.Prefix]int
	// noneAt is the clock plus one of the last tick in which a look at the whole table found nothing to shed
	// for a new connection of the network noneFor: the table is not looked at again for that network before
	// the next tick, so that a table full of connections being served costs an accept no more than one look
	// per tick and network.
	noneAt  int64
	noneFor netip.Prefix // the network of the new connection for which noneAt found nothing
	// closing counts the connections the table closed whose server has not let go of them yet: they keep their
	// place until then, so that the table never admits more connections than the server serves.
	closing  int
	released chan struct{} // a place was given back (capacity 1)
	// fresh counts the connections not yet read by their server (stateNew): they cannot be shed yet, but will
	// be sheddable or served in a moment.
	fresh atomic.Int64
}

const (
	stateNew     = iota // accepted, not yet read by the server (its worker may not have run yet)
	stateHead           // the server waits for a request head, or reads one
	stateServing        // a request head has been read: its request is being served
	stateIdle           // kept alive between requests
	stateClosed         // closed by the server, or by the table for a late head
	stateShed           // closed by the table to make room
)

// connTrack is the table's record of one connection. Its word holds its state and since when (the table's
// clock); only the goroutine serving the connection moves it between the open states; the table closes it (to
// shed it, or for a late head) or the server does, whichever comes first.
type connTrack struct {
	word   atomic.Uint64 // since<<3 | state
	idx    int           // in table.all, under table.mu; -1 once released
	addr   netip.Addr
	net    netip.Prefix
	count  bool // counted per address and network
	killed bool // closed by the table (under mu)
	// writesKilled: its writes interrupted too, for the write timeout (under mu).
	writesKilled bool
	sock         net.Conn
	table        *connTable

	// writing is the table's clock plus one when a write to the connection began that has not returned; 0:
	// none. Set by the serving goroutine, read by the sweeper.
	writing atomic.Int64

	// Of the serving goroutine only.
	state   uint64     // the state it last set
	pending int        // request heads read whose exchange has not ended (pipelining)
	guard   *lineGuard // the connection's line guard: whether a head is being read
}

func pack(state uint64, since int64) uint64 { return uint64(since)<<3 | state }

func unpack(w uint64) (state uint64, since int64) { return w & 7, int64(w >> 3) }

// closedState reports whether s is the state of a closed connection.
func closedState(s uint64) bool { return s >= stateClosed }

// victim is a sheddable connection as the table saw it: its state word then (one whose state changed since is
// not shed), the connections of its network and since when it waits on its client.
type victim struct {
	t      *connTrack
	word   uint64
	weight int   // connections its network held
	since  int64 // when its head, idleness or blocked write began (the table's clock)
}

// stuckWrite is how long, in the table's milliseconds, a write may wait on a client that does not take the
// answer's bytes before the connection counts as waiting on its client, sheddable near the cap like an idle
// one: a client reading at a trickle would otherwise hold its place for as long as its pipelined answers last,
// each write returning within the write timeout. Short, because a flood's new connections take the places its
// shed ones give back and cannot be shed until their writes are stuck in turn: the shorter, the sooner the
// places come back for other clients (a write to a client that reads is done in microseconds).
const stuckWrite = 250

// left notes that a connection left state s (for another, or closed).
func (l *connTable) left(s uint64) {
	if s == stateNew {
		l.fresh.Add(-1)
	}
}

func newConnTable(ln net.Listener, lim connLimits, exempt func() []netip.Prefix, open *atomic.Int64) *connTable {
	return &connTable{Listener: ln, connLimits: lim, exempt: exempt, open: open, start: time.Now(),
		released: make(chan struct{}, 1),
		perAddr:  make(map[netip.Addr]int), perNet: make(map[netip.Prefix]int),
		refusal: plainAnswer("429 Too Many Requests", "", "Too many connections from this address or its network; retry later."),
		full:    plainAnswer("503 Service Unavailable", "Retry-After: 1\r\n", "The gateway is at its connection limit; retry."),
	}
}

// plainAnswer is a whole plain-text response that closes the connection.
func plainAnswer(status, header, text string) []byte {
	return fmt.Appendf(nil, "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n%s",
		status, len(text), header, text)
}

// shedAt is the number of open connections from which a new one first sheds an old one.
func (l *connTable) shedAt() int { return l.max - max(1, l.max/16) }

func (l *connTable) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		t := &connTrack{sock: c, table: l}
		if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
			t.addr = ap.Addr().Unmap()
			t.count = !inNetworks(t.addr, l.exempt())
			bits := connPrefix6
			if t.addr.Is4() {
				bits = connPrefix4
			}
			t.net, _ = t.addr.Prefix(bits)
		} // else not an IP connection (a test's in-memory listener): counted in all only
		// Read from the clock once per connection, not per request: among the connections a flood keeps
		// reopening, a new one must be told apart from those accepted a moment before it.
		t.word.Store(pack(stateNew, l.now()))
		if !l.admit(t) {
			continue
		}
		if sc, ok := c.(*strictConn); ok {
			sc.t, t.guard = t, &sc.guard
		}
		return &conn{Conn: c, t: t, l: l, stripe: nextStripe.Add(1)}, nil
	}
}

// admit enters a new connection in the table, or refuses it (answered and closed).
func (l *connTable) admit(t *connTrack) bool {
	var refusal []byte
	l.mu.Lock()
	switch {
	case t.count && l.perAddr[t.addr] >= l.perIP:
		refusedPerIP.Inc()
		refusal = l.refusal
	case t.count && l.perNet[t.net] >= l.perPrefix:
		refusedPerPrefix.Inc()
		refusal = l.refusal
	case len(l.all) >= l.shedAt() && !l.shedOne(t) && l.overShare(t):
		// Near the cap a new connection first takes a sheddable connection's place (shedOne closes it); one that
		// takes no one's place gets one of the last places only while its network holds less than its share: the places a flood's connections give back do not all go back to
		// the flood, which reopens at once, but wait for the networks that hold few.
		refusedFull.Inc()
		refusal = l.full
	default:
		// A full table waits, a second at most, rather than refuse, while a place is about to come back: a
		// connection being closed keeps its place until its server lets go of it, and one its server has not read
		// yet becomes sheddable (or is served) once it is read.
		for wait := time.Second; len(l.all) >= l.max && wait > 0; wait -= 10 * time.Millisecond {
			if l.closing == 0 {
				l.shedOne(t)
			}
			if l.closing == 0 && l.fresh.Load() == 0 {
				break
			}
			l.mu.Unlock()
			select {
			case <-l.released:
			case <-time.After(10 * time.Millisecond):
			}
			l.mu.Lock()
		}
		if len(l.all) < l.max {
			l.add(t)
			l.mu.Unlock()
			return true
		}
		refusedFull.Inc()
		refusal = l.full
	}
	l.mu.Unlock()
	l.refuse(t.sock, refusal)
	return false
}

func (l *connTable) refuse(c net.Conn, answer []byte) {
	if answer != nil {
		_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = c.Write(answer)
	}
	_ = c.Close()
}

// add enters t in the table; under mu.
func (l *connTable) add(t *connTrack) {
	t.idx = len(l.all)
	l.all = append(l.all, t)
	l.fresh.Add(1)
	l.open.Add(1)
	openConns.Add(1)
	if t.count {
		l.perAddr[t.addr]++
		l.perNet[t.net]++
	}
}

// release takes t out of the table, once, when its server has closed it; under mu.
func (l *connTable) release(t *connTrack) {
	if t.idx < 0 {
		return
	}
	last := l.all[len(l.all)-1]
	l.all[t.idx], last.idx = last, t.idx
	l.all[len(l.all)-1] = nil
	l.all = l.all[:len(l.all)-1]
	t.idx = -1
	l.open.Add(-1)
	openConns.Add(-1)
	if t.count {
		decrement(l.perAddr, t.addr)
		decrement(l.perNet, t.net)
	}
	if t.killed {
		l.closing--
	}
	select {
	case l.released <- struct{}{}:
	default:
	}
}

// kill closes t, whose state word it has just set to closed (or found closed), and interrupts its reads, and
// its writes when writes is set (else the server may still answer it, 408 to a late head); under mu. It keeps
// its place until its server closes it (closed). A connection closed for a late head may be killed again for
// a write that then does not complete: its writes are interrupted then.
func (l *connTable) kill(t *connTrack, writes bool) {
	// The socket's own deadlines are safe to set from any goroutine, and take effect at once (deadlines.go).
	if !t.killed {
		t.killed = true
		l.closing++
		_ = t.sock.SetReadDeadline(time.Unix(1, 0))
	}
	if writes && !t.writesKilled {
		t.writesKilled = true
		_ = t.sock.SetWriteDeadline(time.Unix(1, 0))
	}
}

func decrement[K comparable](m map[K]int, k K) {
	if n := m[k]; n <= 1 {
		delete(m, k)
	} else {
		m[k] = n - 1
	}
}

// closed releases t when the server closes its connection.
func (l *connTable) closed(t *connTrack) {
	for {
		w := t.word.Load()
		s, _ := unpack(w)
		if closedState(s) {
			break
		}
		if t.word.CompareAndSwap(w, pack(stateClosed, 0)) {
			l.left(s)
			break
		}
	}
	l.mu.Lock()
	l.release(t)
	l.mu.Unlock()
}

// shedSample is how many connections, drawn at random, the table compares to choose the one to shed.
const shedSample = 32

// overShare reports whether the network of the new connection t holds its share of the places already, where
// several networks hold some: the places divided among them and one more, so that a share stays for a network
// that holds none yet (a flood's connections, given back one at a time, would otherwise go back to the flood,
// which reopens at once). A trusted proxy's, a new network's and a lone network's are never over.
func (l *connTable) overShare(t *connTrack) bool {
	own, nets := l.perNet[t.net], len(l.perNet)
	if !t.count || own == 0 || nets < 2 {
		return false
	}
	return own >= l.max/(nets+1)
}

// shedOne closes a sheddable connection to make room for the new connection t: of shedSample drawn at random,
// the first in the table's order (those of the network holding the most connections first, then the oldest). A
// sample keeps the choice cheap however large the table, and fresh: a list made once would go stale while a
// flood reconnects. Only when the sample holds none is the whole table looked at, at most once per tick while
// that finds none for t's network. It reports whether it closed one. Under mu.
func (l *connTable) shedOne(t *connTrack) bool {
	for range 2 { // a second try when the chosen one changed state meanwhile
		v := l.choose(true, t)
		if v.t == nil {
			now := l.clock.Load()
			if l.noneAt == now+1 && l.noneFor == t.net {
				return false
			}
			if v = l.choose(false, t); v.t == nil {
				l.noneAt, l.noneFor = now+1, t.net
				return false
			}
		}
		if v.t.word.CompareAndSwap(v.word, pack(stateShed, 0)) {
			s, _ := unpack(v.word)
			l.kill(v.t, s == stateServing) // a blocked write is interrupted too
			connsShed.Inc()
			return true
		}
	}
	return false
}

// choose returns the first connection in the table's order that the new connection n may take the place of,
// of a random sample or of the whole table; none (t nil) when there is none. Under mu.
//
// n takes the place of a connection of a network that would still hold at least as many as n's own (a flood
// reopening what is shed does not take the places of the networks holding fewer, a newcomer's among them), of
// its own network, or of a trusted proxy; a trusted proxy's newcomer, of any. A connection whose write is stuck
// has been served a while before: its place goes only to a network that would then still hold fewer, so that a
// flood does not trade its stuck writers for new connections of its own, which cannot be shed until their
// writes are stuck in turn, and leave no place to anyone else.
func (l *connTable) choose(sample bool, n *connTrack) victim {
	var best victim
	now := l.clock.Load()
	// A write is stamped with the clock of the tick before it began: a tick more makes sure it waited stuckWrite.
	stuck := stuckWrite + l.tick().Milliseconds()
	own := 0
	if n.count {
		own = l.perNet[n.net]
	}
	consider := func(t *connTrack) {
		w := t.word.Load()
		s, since := unpack(w)
		weight := 0 // a trusted proxy's (or a connection without an address) goes last
		if t.count {
			weight = l.perNet[t.net]
		}
		switch s {
		case stateHead, stateIdle:
			if n.count && t.count && t.net != n.net && weight < own+1 {
				return
			}
		case stateServing:
			began := t.writing.Load()
			if began == 0 || now-(began-1) < stuck || weight <= own+1 {
				return
			}
			since = began - 1
		default:
			return
		}
		if best.t == nil || weight > best.weight || weight == best.weight && since < best.since {
			best = victim{t: t, word: w, weight: weight, since: since}
		}
	}
	if sample && len(l.all) > shedSample {
		for range shedSample {
			consider(l.all[rand.IntN(len(l.all))])
		}
	} else {
		for _, t := range l.all {
			consider(t)
		}
	}
	return best
}

// now reads the table's clock exactly (the clock field is its reading at the last tick).
func (l *connTable) now() int64 {
	return (time.Since(l.start) - time.Duration(l.stalled.Load())).Milliseconds()
}

// sweep advances the table's clock and closes the connections past a timeout, until stop is closed. A tick that
// comes more than two ticks after the one before marks a stall: the time beyond one tick is left out of the
// clock, so that a stopped process does not take its clients for late.
func (l *connTable) sweep(stop <-chan struct{}) {
	every := l.tick()
	tick := time.NewTicker(every)
	defer tick.Stop()
	last := time.Since(l.start)
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ran := time.Since(l.start)
		if gap := ran - last; gap > 2*every {
			l.stalled.Add(int64(gap - every))
		}
		last = ran
		now := l.now()
		l.clock.Store(now)
		l.expire(now, every.Milliseconds())
	}
}

// expire closes the connections past a timeout at the table's clock now. A state's start, and a write's, is
// stamped with the clock of the last tick, up to a tick before it began: a tick more makes sure none is cut
// before its time.
func (l *connTable) expire(now, tick int64) {
	lim := l.timeouts()
	if lim == (timeouts{}) {
		return
	}
	past := func(limit, since int64) bool { return limit > 0 && now-since >= limit+tick }
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.all {
		w := t.word.Load()
		s, since := unpack(w)
		// A write that does not complete: whatever the connection's state, closed by the table included (its
		// server may be writing the 408 of a late head, or the 503 of a shed connection, to a client that
		// reads nothing).
		if began := t.writing.Load(); began > 0 && !t.writesKilled && past(lim.write, began-1) {
			if !closedState(s) {
				if !t.word.CompareAndSwap(w, pack(stateClosed, 0)) {
					continue // its state moved meanwhile: judged again at the next tick
				}
				l.left(s)
			}
			writeTimeouts.Inc()
			l.kill(t, true)
			continue
		}
		// A connection the server has not read yet (stateNew) waits for the server, not for its client: its
		// head, whose clock runs from the acceptance all the same, is judged once the server has begun to read it.
		var why *metrics.Counter
		switch {
		case s == stateHead && past(lim.head, since):
			why = headTimeouts
		case s == stateIdle && past(lim.idle, since):
			why = idleTimeouts
		}
		if why != nil && t.word.CompareAndSwap(w, pack(stateClosed, 0)) {
			l.left(s)
			why.Inc()
			l.kill(t, false)
		}
	}
}

// errShed is the read error of a connection the table closed to make room: serverError answers it 503. Its
// text says "i/o timeout", the words that keep fasthttp from logging the connection's end as an error (as for
// a late head): the table counts both (reqgate_gateway_connections_shed_total, _header_timeouts_total).
var errShed = errors.New("i/o timeout: the connection was shed to make room for a new one")

// move sets the connection's state, since the given time or (since < 0) since when its state began, unless the
// table has closed it: then it returns the error its reads return.
func (t *connTrack) move(state uint64, since int64) error {
	for {
		w := t.word.Load()
		s, began := unpack(w)
		if closedState(s) {
			return readErr(s)
		}
		if since < 0 {
			since = began
		}
		if t.word.CompareAndSwap(w, pack(state, since)) {
			t.table.left(s)
			t.state = state
			return nil
		}
	}
}

// readErr is what a read of a connection closed in state s returns.
func readErr(s uint64) error {
	if s == stateShed {
		return errShed
	}
	return os.ErrDeadlineExceeded
}

// heads notes, after the line guard read more of the connection, that ended heads were completed and whether
// a head is being read now.
func (t *connTrack) heads(ended int, reading bool, clock int64) error {
	t.pending += ended
	switch {
	case t.pending > 0:
		if t.state != stateServing {
			return t.move(stateServing, clock)
		}
	case reading && t.state == stateIdle:
		return t.move(stateHead, clock)
	}
	return nil
}

// exchanged notes that the server ended an exchange on the connection (ConnState idle).
func (t *connTrack) exchanged(clock int64) {
	if t.pending > 0 {
		t.pending--
	}
	if t.pending > 0 {
		return
	}
	state := uint64(stateIdle)
	if t.guard != nil && t.guard.reading() {
		state = stateHead // a pipelined head is on its way
	}
	_ = t.move(state, clock)
}

// connState is the server's ConnState hook: the end of an exchange makes a connection idle.
func (g *Gateway) connState(nc net.Conn, s fasthttp.ConnState) {
	if s != fasthttp.StateIdle {
		return
	}
	if c := connOf(nc); c != nil {
		c.endExchange()
	}
}

// conn is an accepted connection. A tracked one (t set) leaves the table when closed, once however often Close
// is called; its reads fail once the table has closed it.
// nextStripe gives accepted connections their stripes in turn.
var nextStripe atomic.Uint32

// stripeOf is c's stripe of the striped counters (internal/striped); 0 for nil (a connection the gateway did
// not accept).
func (c *conn) stripeOf() uint32 {
	if c != nil {
		return c.stripe
	}
	return 0
}

type conn struct {
	net.Conn
	t *connTrack
	l *connTable
	// stripe is the connection's stripe of the striped counters (internal/striped) its requests add to.
	stripe uint32
	// deadline is whether a read deadline is set (by the handler, for a body): the exchange's end takes it off.
	deadline bool
	// The memos are used by the one request the connection serves at a time.
	auth    authMemo
	metrics metricsMemo
	limits  ratelimit.Memo // the rate keys of the connection's last request
	access  accesslog.Memo // the repeated fields of the connection's last access-log line
	hit     hitHead        // the response head of the connection's last cache hit (hithead.go)
}

// Read fails once the table has closed the connection. The server's first read makes a new connection one
// that waits for its head: only from then may it be shed (its head may have arrived long before a busy server
// got to it).
func (c *conn) Read(p []byte) (int, error) {
	if t := c.t; t != nil {
		if s, _ := unpack(t.word.Load()); closedState(s) {
			return 0, readErr(s)
		}
		if t.state == stateNew {
			if err := t.move(stateHead, -1); err != nil {
				return 0, err
			}
		}
	}
	n, err := c.Conn.Read(p)
	if err != nil && c.t != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		if s, _ := unpack(c.t.word.Load()); closedState(s) {
			err = readErr(s)
		}
	}
	return n, err
}

// Write stamps the write with the table's clock while it lasts, for the write timeout (connTable.expire) and
// for shedding a connection whose client does not take its answers (stuckWrite).
func (c *conn) Write(p []byte) (int, error) {
	t := c.t
	if t == nil {
		return c.Conn.Write(p)
	}
	t.writing.Store(c.l.clock.Load() + 1)
	n, err := c.Conn.Write(p)
	t.writing.Store(0)
	return n, err
}

// SetReadDeadline keeps a connection the table closed interrupted. A deadline the handler sets (body.go) is
// taken off when the exchange ends (endExchange): the server sets none of its own to replace it.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.deadline = !t.IsZero()
	if c.t != nil {
		if s, _ := unpack(c.t.word.Load()); closedState(s) {
			t = time.Unix(1, 0)
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// endExchange is the end of an exchange on c: a read deadline set for its body goes, and the connection
// becomes idle in the table.
func (c *conn) endExchange() {
	if c.deadline {
		_ = c.SetReadDeadline(time.Time{})
	}
	if c.t != nil {
		c.t.exchanged(c.t.table.clock.Load())
	}
}

func (c *conn) Close() error {
	if c.l != nil {
		c.l.closed(c.t)
	}
	return c.Conn.Close()
}

// NetConn is the connection c wraps (as tls.Conn's NetConn), for a look at the socket (peerClosed).
func (c *conn) NetConn() net.Conn { return c.Conn }

// authMemo is the last credential parsed on a connection: a client sends the same Authorization header with
// every request of a connection, and the memo spares each of them the decoding and keyed hash. Whether the
// credential is verified is still looked up each time (it may have been forgotten or have expired).
type authMemo struct {
	raw    []byte
	apiKey string
	cred   credential
	// The proof of cred as last looked up in from, when from's gen was gen (see credentials.checkOn).
	from     *credentials
	gen      uint64
	provedOK bool
	provedAt time.Time
}
