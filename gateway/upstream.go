package gateway

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// doer is what the gateway needs of an upstream client: *fasthttp.HostClient or *fasthttp.LBClient.
type doer interface {
	DoTimeout(req *fasthttp.Request, resp *fasthttp.Response, timeout time.Duration) error
}

// upstream is the core (or the cores) behind the gateway.
type upstream struct {
	client  doer
	host    string   // Host header sent upstream (of the first core)
	prefix  string   // path prefix of the upstream URL, "" or "/x"
	origins [][]byte // scheme://host of every core, to recognise its own address in a Location
	timeout time.Duration

	balancer *balancer // nil with one core
	prober   *prober   // nil with one core or when health checks are off
}

func newUpstream(o *Options) (*upstream, error) {
	u := &upstream{timeout: o.UpstreamTimeout}
	tc, err := o.UpstreamTLS.config()
	if err != nil {
		return nil, err
	}
	var clients []*fasthttp.HostClient
	for i, raw := range o.Upstreams {
		pu, err := parseUpstream(raw)
		if err != nil {
			return nil, err
		}
		prefix := strings.TrimSuffix(pu.Path, "/")
		if i == 0 {
			u.host, u.prefix = pu.Host, prefix
		} else if prefix != u.prefix {
			return nil, fmt.Errorf("gateway: upstream %q: every upstream needs the same path prefix %q", raw, u.prefix)
		}
		u.origins = append(u.origins, []byte(pu.Scheme+"://"+pu.Host))
		clients = append(clients, coreClient(pu, o, tc))
	}
	if o.UpstreamHost != "" {
		u.host = o.UpstreamHost
	}
	if len(clients) == 1 {
		u.client = clients[0]
		return u, nil
	}
	b := newBalancer(clients, o)
	if o.HealthInterval > 0 {
		b.probing = true
		u.prober = b.startProber(o.HealthInterval, o.HealthTimeout, u.prefix+"/readyz", u.host)
	}
	u.balancer = b
	u.client = b
	return u, nil
}

// parseUpstream parses the URL of a core: http or https, with a host.
func parseUpstream(raw string) (*url.URL, error) {
	pu, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("gateway: upstream %q: %w", raw, err)
	}
	if pu.Scheme != "http" && pu.Scheme != "https" || pu.Host == "" {
		return nil, fmt.Errorf("gateway: upstream %q: want http://host:port or https://host:port", raw)
	}
	return pu, nil
}

// defaultPorts are the ports of the schemes of an upstream URL.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// coreClient is the client of the core at pu (parsed by parseUpstream).
// An https core's connections are dialled with tc (upstreamtls.go).
func coreClient(pu *url.URL, o *Options, tc *tls.Config) *fasthttp.HostClient {
	addr := pu.Host
	if pu.Port() == "" {
		addr += ":" + defaultPorts[pu.Scheme]
	}
	d := dial
	if pu.Scheme == "https" {
		d = tlsDialer(tc, pu.Hostname())
	}
	return &fasthttp.HostClient{
		Addr:                     addr,
		IsTLS:                    pu.Scheme == "https",
		Name:                     "reqgate-gateway",
		NoDefaultUserAgentHeader: true,
		DialTimeout:              d,
		MaxConns:                 o.MaxIdleConns,
		MaxConnWaitTimeout:       o.MaxConnWait,
		MaxIdleConnDuration:      30 * time.Second,
		ReadTimeout:              o.UpstreamTimeout,
		WriteTimeout:             o.UpstreamTimeout,
		MaxResponseBodySize:      o.MaxResponseBytes,
		ReadBufferSize:           16 << 10,
		DisablePathNormalizing:   true, // the path is normalised once, by route.Parse
		// One retry when a kept-alive connection turned out closed: for reads whatever happened, for writes only
		// when the core had closed the connection before any of the request was sent (errUnsent), since a
		// write must not reach the core twice.
		MaxIdemponentCallAttempts: 2,
		RetryIfErr: func(req *fasthttp.Request, attempts int, err error) (bool, bool) {
			return false, attempts < 2 && (errors.Is(err, errUnsent) ||
				(req.Header.IsGet() || req.Header.IsHead()) && !isTimeout(err))
		},
	}
}

// newBalancer spreads requests over the cores of clients, each with a client of its own for health checks;
// all start up, at full share.
func newBalancer(clients []*fasthttp.HostClient, o *Options) *balancer {
	b := &balancer{downFor: time.Second, slowStart: o.SlowStart, log: o.Logger}
	for _, c := range clients {
		be := &backend{hc: c, addr: c.Addr, probe: &fasthttp.HostClient{
			Addr:                     c.Addr,
			IsTLS:                    c.IsTLS,
			Name:                     "reqgate-gateway-probe",
			NoDefaultUserAgentHeader: true,
			DialTimeout:              c.DialTimeout, // the core's own TLS, if any
			MaxConns:                 2,
			MaxIdleConnDuration:      max(3*o.HealthInterval, time.Second),
			MaxResponseBodySize:      64 << 10,
		}}
		be.upGauge = metrics.GetOrCreateGauge(`reqgate_gateway_upstream_up{upstream="`+c.Addr+`"}`, nil)
		be.up.Store(true)
		be.upGauge.Set(1)
		b.backends = append(b.backends, be)
	}
	return b
}

// close stops the health checks, if any.
func (u *upstream) close() {
	if u.prober != nil {
		u.prober.Stop()
	}
}

// dialTimeout bounds connecting to a core, whatever is left of the request's budget: a core that does not
// accept connections must not hold a request for the whole upstream timeout.
const dialTimeout = 3 * time.Second

// dialError marks a failure to connect: the request was never sent, so another core may take it, writes too.
type dialError struct{ error }

func (e dialError) Unwrap() error { return e.error }

func dial(addr string, timeout time.Duration) (net.Conn, error) {
	c, err := fasthttp.DialDualStackTimeout(addr, min(timeout, dialTimeout))
	if err != nil {
		return nil, dialError{err}
	}
	return &coreConn{Conn: c, addr: coreAddr{Addr: c.RemoteAddr(), name: addr}}, nil
}

// errUnsent is a request not sent because the core had closed its kept-alive connection (it stopped, restarted
// or let the connection idle out): nothing reached the core, so it may be sent again, writes too.
var errUnsent = errors.New("the core closed the connection before the request was sent")

// coreConn is a connection to a core that, before the first write of each request, checks that the core has not
// closed it: a request written into a closed connection gets no answer, and the gateway could not tell whether
// the core applied it, where in fact it never saw it.
type coreConn struct {
	net.Conn
	used bool     // an answer was read: the next write starts a request on a kept-alive connection
	addr coreAddr // RemoteAddr (coreaddr.go)
}

func (c *coreConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.used = true
	return n, err
}

func (c *coreConn) Write(p []byte) (int, error) {
	if c.used {
		c.used = false
		if peerClosed(c.Conn) {
			return 0, errUnsent
		}
	}
	return c.Conn.Write(p)
}

// NetConn is the connection underneath, for peerClosed.
func (c *coreConn) NetConn() net.Conn { return c.Conn }

func isDialError(err error) bool {
	var de dialError
	var du *fasthttp.ErrDialWithUpstream
	return errors.As(err, &de) || errors.As(err, &du)
}

// balancer spreads requests over several cores: the least busy core that is up, a core in its slow start
// getting its share (health.go). A core is out (not chosen while another is up) after failures in a row of its
// probes and requests, or at once after it refused a connection; its next answer puts it back. Without health
// checks a core is out for downFor instead. If every core is out they are all tried anyway, spread as if they
// were up (panic mode): the gateway never answers 503 on its own guess, and a core that answers while its
// probes fail keeps serving.
//
// A refused connection sends the request to the next core (it was never sent, so this is safe for writes).
// A failure after the request was sent is returned as it is (a write must not reach a core twice), except
// for a read (GET, HEAD), which is sent once more, to another core, within what is left of its deadline
// (retryRead); a broken connection also closes the core's pooled connections, which are likely dead too.
type balancer struct {
	backends  []*backend
	downFor   time.Duration
	slowStart time.Duration // Options.SlowStart
	probing   bool          // health checks run: they, not downFor, put a core back
	log       *slog.Logger
	next      atomic.Uint32
	mu        sync.Mutex // the weighted choice while a core is in its slow start (backend.current)
}

type backend struct {
	hc        *fasthttp.HostClient // requests
	probe     *fasthttp.HostClient // health checks, a pool of their own
	addr      string               // host:port, the metric label
	up        atomic.Bool          // health state
	fails     atomic.Int64         // failures in a row, probes and requests together, since its last answer
	downUntil atomic.Int64         // unix nanoseconds: it refused a connection (or, without probes, failed) and rests
	downAt    atomic.Int64         // unix nanoseconds of the last time it was taken out or refused a connection
	warmFrom  atomic.Int64         // unix nanoseconds: the start of its slow start; 0 once at full share
	sent      atomic.Uint64        // requests sent (or maybe sent) to this core
	upGauge   *metrics.Gauge
	current   float64 // smooth weighted round robin (pickWeighted), under balancer.mu
}

func (b *balancer) DoTimeout(req *fasthttp.Request, resp *fasthttp.Response, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tried := make([]bool, len(b.backends))
	var err error
	retried := false
	for range b.backends {
		i := b.pick(tried)
		tried[i] = true
		be := b.backends[i]
		left := time.Until(deadline)
		if left <= 0 {
			return fasthttp.ErrTimeout
		}
		schemeFor(req, be.hc)
		setBudget(req, left)
		err = be.hc.DoTimeout(req, resp, left)
		if err == nil {
			be.sent.Add(1)
			// An answer proves the core alive; a server error is left to the probes, so that a core answering
			// 503 to everything is not kept in by its own errors.
			if resp.StatusCode() < fasthttp.StatusInternalServerError {
				b.answered(be, "request answered")
			}
			return nil
		}
		if isDialError(err) {
			be.hc.CloseIdleConnections()
			b.failed(be, err, "request could not connect")
			continue
		}
		if errors.Is(err, errUnsent) {
			// The core closed the kept-alive connections the request was about to use (it stopped or restarted,
			// or they idled out): nothing was sent, so another core may take it, writes too. The next request
			// to this core dials anew, and a refusal then takes it out.
			be.hc.CloseIdleConnections()
			continue
		}
		be.sent.Add(1)
		// Sent, or maybe sent: not tried elsewhere. A connection closed or reset under the request says the core
		// may be gone, and then its pooled connections are dead too: drop them. A full pool or an oversized
		// answer says nothing of the core's health.
		if connectionLost(err) {
			be.hc.CloseIdleConnections()
		}
		if connectionLost(err) || isTimeout(err) {
			b.failed(be, err, "request failed")
		}
		if !retried && retryRead(req, err) {
			retried = true
			readRetries.Inc()
			b.log.Warn("read failed at a core; sending it to another", "upstream", be.addr, "err", err)
			continue
		}
		return err
	}
	return err
}

// retryRead reports whether a read that failed at one core after it was sent may go to another: a GET or HEAD
// changes nothing, so sending it twice is safe. Not after a timeout, which spent the read's deadline, nor for
// an answer too large, which another core would give alike.
func retryRead(req *fasthttp.Request, err error) bool {
	return (req.Header.IsGet() || req.Header.IsHead()) && !isTimeout(err) && !errors.Is(err, fasthttp.ErrBodyTooLarge)
}

// usable reports whether be may be chosen while another core is up.
func (be *backend) usable(now int64) bool {
	return be.up.Load() && be.downUntil.Load() <= now
}

// pick returns the untried backend to use: among those up, the least busy, or by their shares while one is in its
// slow start. When none is up (panic mode): the same among all that have not refused a connection within
// downFor. Else the one refused longest ago.
func (b *balancer) pick(tried []bool) int {
	now := time.Now().UnixNano()
	if i := b.pickAmong(tried, now, func(be *backend) bool { return be.usable(now) }); i >= 0 {
		return i
	}
	if i := b.pickAmong(tried, now, func(be *backend) bool { return be.downUntil.Load() <= now }); i >= 0 {
		return i
	}
	// Every untried core refused a connection just now: the one out the longest first, as the likeliest to be
	// back (a core that has just failed is the least likely).
	best := -1
	for i, be := range b.backends {
		if !tried[i] && (best < 0 || be.downAt.Load() < b.backends[best].downAt.Load()) {
			best = i
		}
	}
	return max(best, 0)
}

// pickAmong returns the untried backend to use among those that ok accepts, -1 if none: the least busy, from a
// rotating start so that equal loads take turns; while one of them is in its slow start, by pickWeighted.
func (b *balancer) pickAmong(tried []bool, now int64, ok func(*backend) bool) int {
	best, bestLoad := -1, 0
	warming := false
	n := len(b.backends)
	start := int(b.next.Add(1) % uint32(n))
	for k := range n {
		i := (start + k) % n
		be := b.backends[i]
		if tried[i] || !ok(be) {
			continue
		}
		warming = warming || b.weight(be, now) < 1
		if load := be.hc.PendingRequests(); best < 0 || load < bestLoad {
			best, bestLoad = i, load
		}
	}
	if !warming {
		return best
	}
	return b.pickWeighted(tried, now, ok)
}

// pickWeighted chooses among the untried backends that ok accepts by smooth weighted round robin (as nginx
// does), each weighing its slow-start share divided by its requests in flight plus one: with equal loads a core
// at a tenth of its share gets one request in eleven, and every core gets its turn in order, not by chance.
func (b *balancer) pickWeighted(tried []bool, now int64, ok func(*backend) bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	best, total := -1, 0.0
	for i, be := range b.backends {
		if tried[i] || !ok(be) {
			continue
		}
		w := b.weight(be, now) / float64(be.hc.PendingRequests()+1)
		be.current += w
		total += w
		if best < 0 || be.current > b.backends[best].current {
			best = i
		}
	}
	if best >= 0 {
		b.backends[best].current -= total
	}
	return best
}

// UpstreamStats describe one core behind a balancing gateway.
type UpstreamStats struct {
	Addr     string // host:port
	Up       bool   // health state
	Requests uint64 // requests sent (or maybe sent) to it
}

func (b *balancer) stats() []UpstreamStats {
	s := make([]UpstreamStats, len(b.backends))
	for i, be := range b.backends {
		s[i] = UpstreamStats{Addr: be.addr, Up: be.up.Load(), Requests: be.sent.Load()}
	}
	return s
}

// connectionLost reports whether an exchange failed because the connection broke (closed, reset), rather
// than by a timeout, a full pool or an oversized answer.
func connectionLost(err error) bool {
	return !isTimeout(err) && !errors.Is(err, fasthttp.ErrNoFreeConns) && !errors.Is(err, fasthttp.ErrBodyTooLarge)
}

// do sends req upstream; the error is classified by status.
func (u *upstream) do(req *fasthttp.Request, resp *fasthttp.Response) error {
	if hc, ok := u.client.(*fasthttp.HostClient); ok {
		schemeFor(req, hc)
		setBudget(req, u.timeout)
	}
	return u.client.DoTimeout(req, resp, u.timeout)
}

// schemeFor gives req the scheme hc speaks. A request read from a TLS connection has the scheme https, and
// fasthttp's client refuses to send a request whose scheme is not its own (ErrHostClientRedirectToDifferentScheme).
func schemeFor(req *fasthttp.Request, hc *fasthttp.HostClient) {
	if hc.IsTLS {
		req.URI().SetScheme("https")
	} else {
		req.URI().SetScheme("http")
	}
}

// upstreamStatus maps a failed upstream exchange to the gateway's answer: 504 for a timeout, 503 when no
// connection or no slot of the account (inflight.go) came free in time, 502 for everything else (refused,
// reset, malformed or oversized reply). upstreamFailed adds Retry-After to the 502s and 503s.
func upstreamStatus(err error) (int, string) {
	switch {
	case errors.Is(err, errAccountBusy):
		return fasthttp.StatusServiceUnavailable,
			"Too many requests of this account are in progress; nothing was sent on. Try again shortly."
	case isTimeout(err):
		return fasthttp.StatusGatewayTimeout, "The upstream service did not answer in time."
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return fasthttp.StatusServiceUnavailable, "The upstream service is busy; try again shortly."
	default:
		return fasthttp.StatusBadGateway, "The upstream service is unavailable."
	}
}

// neverSent reports whether a failed exchange ended before any of the request could reach the core: no
// connection (or no slot of its account) came free, or none could be made (refused, unreachable, the dial timed out). Anything else (a
// reset, a timeout waiting for the answer, a connection closed before the status) leaves open whether the core
// received the request and acted on it.
func neverSent(err error) bool {
	var throttled *errUpstreamThrottled
	return isDialError(err) || errors.Is(err, errUnsent) || errors.Is(err, fasthttp.ErrNoFreeConns) ||
		errors.Is(err, errAccountBusy) || errors.As(err, &throttled)
}

func isTimeout(err error) bool {
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
