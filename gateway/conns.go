package gateway

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

var connsRefused = metrics.GetOrCreateCounter(`reqgate_gateway_connections_refused_total`)

// connLimiter caps the connections one client IP holds open at once, so that a single address cannot take the
// gateway's connections (and the memory each one holds) from everyone else. Trusted proxies are exempt: every
// caller behind them shares their address. A connection over the cap is answered 429 and closed at once.
type connLimiter struct {
	net.Listener
	perIP   int
	exempt  []netip.Prefix
	mu      sync.Mutex
	open    map[netip.Addr]int
	refusal []byte
}

func limitConns(ln net.Listener, perIP int, exempt []netip.Prefix) net.Listener {
	if perIP <= 0 {
		return ln
	}
	return &connLimiter{Listener: ln, perIP: perIP, exempt: exempt, open: make(map[netip.Addr]int),
		refusal: []byte("HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\n" +
			"Content-Length: 52\r\nConnection: close\r\n\r\nToo many connections from this address; retry later.")}
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err != nil {
			return c, nil // not an IP connection (a test's in-memory listener): nothing to count
		}
		a := ap.Addr().Unmap()
		if inNetworks(a, l.exempt) {
			return c, nil
		}
		l.mu.Lock()
		n := l.open[a]
		if n >= l.perIP {
			l.mu.Unlock()
			connsRefused.Inc()
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = c.Write(l.refusal)
			_ = c.Close()
			continue
		}
		l.open[a] = n + 1
		l.mu.Unlock()
		return &countedConn{Conn: c, l: l, addr: a}, nil
	}
}

func (l *connLimiter) done(a netip.Addr) {
	l.mu.Lock()
	if n := l.open[a]; n <= 1 {
		delete(l.open, a)
	} else {
		l.open[a] = n - 1
	}
	l.mu.Unlock()
}

// countedConn gives its place back when closed (once, however often Close is called).
type countedConn struct {
	net.Conn
	l    *connLimiter
	addr netip.Addr
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.done(c.addr) })
	return c.Conn.Close()
}
