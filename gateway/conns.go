package gateway

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/ratelimit"
)

var connsRefused = metrics.GetOrCreateCounter(`reqgate_gateway_connections_refused_total`)

// connLimiter caps the connections one client IP holds open at once, so that a single address cannot take the
// gateway's connections (and the memory each one holds) from everyone else. Trusted proxies are exempt: every
// caller behind them shares their address. A connection over the cap is answered 429 and closed at once.
// Every connection it accepts is a *conn, which also carries the connection's credential memo.
type connLimiter struct {
	net.Listener
	perIP   int
	exempt  func() []netip.Prefix // the trusted proxies in force
	mu      sync.Mutex
	open    map[netip.Addr]int
	refusal []byte // written to a refused connection; nil closes it without a word (TLS)
}

func limitConns(ln net.Listener, perIP int, exempt func() []netip.Prefix) *connLimiter {
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
			return &conn{Conn: c}, nil // not an IP connection (a test's in-memory listener): nothing to count
		}
		a := ap.Addr().Unmap()
		if l.perIP <= 0 || inNetworks(a, l.exempt()) {
			return &conn{Conn: c}, nil
		}
		l.mu.Lock()
		n := l.open[a]
		if n >= l.perIP {
			l.mu.Unlock()
			connsRefused.Inc()
			if l.refusal != nil {
				_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
				_, _ = c.Write(l.refusal)
			}
			_ = c.Close()
			continue
		}
		l.open[a] = n + 1
		l.mu.Unlock()
		return &conn{Conn: c, l: l, addr: a}, nil
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

// conn is an accepted connection. A counted one (l set) gives its place back when closed, once however often
// Close is called.
type conn struct {
	net.Conn
	l    *connLimiter
	addr netip.Addr
	once sync.Once
	// The memos are used by the one request the connection serves at a time.
	auth    authMemo
	metrics metricsMemo
	limits  ratelimit.Memo // the rate keys of the connection's last request
}

func (c *conn) Close() error {
	if c.l != nil {
		c.once.Do(func() { c.l.done(c.addr) })
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
}
