// Package gateway is reqgate's reverse proxy in front of the core: a fasthttp server and client that
// forwards the XML interface of docs/api.md unchanged, answers verified reads from a response cache
// (package cache), makes writes invisible to later reads at once (per-account generations, shared between
// replicas over Redis), limits failed logins and, when given a Limiter, request rates.
//
// A request goes through these stages (handler.go): request id, one normalisation of the target
// (package route), the credential check (auth.go, verify.go: a credential the core has not proved is checked
// with the core before anything else of the request is read or forwarded), the rate limit (limit.go), the
// request body (body.go), then either the cached read path (read.go) or plain forwarding (forward.go).
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/gateway/tenants"
	"github.com/reqgate/reqgate/internal/striped"
)

// Gateway is one gateway replica. Create it with New; serve with Serve or mount Handler in a server of
// your own; stop with Shutdown.
type Gateway struct {
	opt        Options
	active     striped.Int // requests in the handler now (InFlight)
	up         *upstream
	cache      *cache.Cache // nil when the cache is disabled
	bus        cache.Bus
	creds      *credentials
	fails      loginFailures
	strangers  *strangerHolds     // logins waiting past the failed-login limit of all addresses (stranger.go)
	flight     singleflight.Group // cache misses of one key
	verifying  singleflight.Group // verifications of one credential
	refreshing sync.Map           // credkey digests whose refresh ahead of expiry runs (verify.go)
	upBlocks   upstreamBlocks     // accounts the upstream throttled (upthrottle.go)
	budget     bodyBudget
	inflight   *inflight   // requests in flight to the cores per account (inflight.go); nil: no cap
	shares     *bodyShares // of the budget, per account and per client address (bodyshare.go)
	routes     *routes
	ids        *requestIDs
	log        *slog.Logger
	srv        *fasthttp.Server
	scopeUser  bool
	live       atomic.Pointer[live] // what a reload may change (live.go)
	tracer     trace.Tracer         // nil: tracing off
	tenants    *tenants.Tracker     // the busiest accounts' series; nil: none

	upstreamCalls atomic.Uint64
	openConns     atomic.Int64 // client connections open, of all its listeners
}

// New builds a gateway from opt. With several cores it starts their health checks (stopped by Shutdown);
// otherwise it does not contact the upstream.
func New(opt Options) (*Gateway, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	settings, err := newLive(opt.TrustedProxies, opt.CORSOrigins, opt.Limiter)
	if err != nil {
		return nil, err
	}
	opt.fill()
	up, err := newUpstream(&opt)
	if err != nil {
		return nil, err
	}
	fails := newFailures(failureLimits{window: opt.FailureWindow, maxUserIP: opt.MaxUserFailures,
		maxIP: opt.MaxIPFailures, maxUserAll: opt.MaxUserFailuresAllIPs}, opt.MaxFailureKeys, opt.Now)
	fails.known = newKnownAddrs(opt.KnownAddressTTL, opt.MaxKnownUsers)
	g := &Gateway{
		opt:       opt,
		up:        up,
		bus:       cache.LocalBus{},
		creds:     newCredentials(opt.AuthTTL, opt.Now),
		fails:     fails,
		strangers: newStrangerHolds(opt.MaxDelayedLogins),
		ids:       newRequestIDs(),
		log:       opt.Logger,
		scopeUser: opt.Cache.Scope == "user",
		budget:    bodyBudget{max: opt.BodyBudget},
		shares:    newBodyShares(opt.BodyBudget, opt.BodyShare, opt.MaxBodyBytes),
		routes:    newRoutes(),
		tracer:    opt.Tracer,
	}
	if opt.MaxInflightPerAccount > 0 {
		g.inflight = newInflight(opt.MaxInflightPerAccount)
	}
	if opt.Redis != nil {
		g.fails = newSharedFailures(fails, opt.Redis, opt.RedisNamespace, opt.FailureStoreTimeout, opt.Logger)
	}
	g.live.Store(settings)
	if opt.Cache.Enabled {
		g.cache, err = cache.New(cache.Options{MaxBytes: opt.Cache.MaxBytes, TTL: opt.Cache.TTL,
			StaleIfError: opt.Cache.StaleIfError, Now: opt.Now})
		if err != nil {
			up.close()
			return nil, fmt.Errorf("gateway: %w", err)
		}
		if opt.Redis != nil {
			rb := cache.NewRedisBus(opt.Redis, opt.RedisNamespace, g.cache, opt.Logger)
			rb.SetPurgeHandler(g.creds.forgetAccount)
			rb.SetLease(opt.Cache.ReplicaLease)
			g.bus = rb
		}
	}
	g.srv = &fasthttp.Server{
		Handler:               g.handle,
		ExpectHandler:         g.expect, // 100 Continue only after authentication and limits (expect.go)
		ErrorHandler:          g.serverError,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		// No ReadTimeout, WriteTimeout or IdleTimeout: the connection table holds them (conns.go), on its own
		// clock, where the server would read the system clock and move a socket deadline three times a request.
		ConnState: g.connState,
		// The connection table (conns.go) holds the connections to MaxConns; a connection leaves it when the
		// server closes it. The server's own bound sits a little above: its worker is free again a moment after
		// that, and the server must not refuse, meanwhile, a connection the table admitted.
		Concurrency: opt.MaxConns + opt.MaxConns/16 + 16,
		// Bodies are streamed and read by the handler after authentication (body.go). With streaming,
		// MaxRequestBodySize only sizes what the server reads ahead of the handler: one byte, so that an
		// announced body costs no memory before the caller is known. The limit itself is readBody's.
		StreamRequestBody:            true,
		MaxRequestBodySize:           1,
		ReadBufferSize:               16 << 10,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		TCPKeepalive:                 true,
		Logger:                       &serverLog{log: opt.Logger, every: time.Minute},
		SecureErrorLogMessage:        true,
	}
	if opt.TopAccounts > 0 {
		// Exposed with the process's metrics until Shutdown; last, so that a failed New leaves nothing behind.
		g.tenants = tenants.New(opt.TopAccounts)
		metrics.RegisterSet(g.tenants.Set())
	}
	return g, nil
}

// Handler is the gateway's request handler, for a fasthttp.Server of the caller's own. Such a server must set
// StreamRequestBody (the handler reads bodies only after authentication), a small MaxRequestBodySize, and
// ExpectHandler to ExpectHandler (else it answers 100 Continue before the caller is authenticated).
func (g *Gateway) Handler() fasthttp.RequestHandler { return g.handle }

// ExpectHandler is the gateway's handler of `Expect: 100-continue`, for a fasthttp.Server of the caller's own
// that runs Handler.
func (g *Gateway) ExpectHandler() func(*fasthttp.RequestCtx) int { return g.expect }

// Serve accepts connections on ln until Shutdown. It checks the line syntax of every request as it arrives
// (strictconn.go), which a server of the caller's own running Handler does not.
func (g *Gateway) Serve(ln net.Listener) error {
	// The connection table's conn is outermost: the handler finds its credential memo there. The lazy deadlines
	// are innermost, on the socket itself.
	l := g.connTable(strictListener{deadlineListener{ln}})
	stop := make(chan struct{})
	defer close(stop)
	go l.sweep(stop)
	if err := g.srv.Serve(l); err != nil {
		return fmt.Errorf("gateway: serve: %w", err)
	}
	return nil
}

// connTable is the connection table (conns.go) of a listener of the gateway.
func (g *Gateway) connTable(ln net.Listener) *connTable {
	return newConnTable(ln, connLimits{max: g.opt.MaxConns, perIP: g.opt.MaxConnsPerIP,
		perPrefix: g.opt.MaxConnsPerPrefix, headTimeout: g.opt.HeaderTimeout, readTimeout: g.opt.ReadTimeout,
		writeTimeout: g.opt.WriteTimeout, idleTimeout: g.opt.IdleTimeout}, g.trustedProxies, &g.openConns)
}

// Shutdown stops accepting, waits for requests in flight until ctx ends, then releases the cache and bus.
func (g *Gateway) Shutdown(ctx context.Context) error {
	err := g.srv.ShutdownWithContext(ctx)
	g.up.close()
	if g.tenants != nil {
		metrics.UnregisterSet(g.tenants.Set(), true)
	}
	if berr := g.bus.Close(); berr != nil {
		err = errors.Join(err, fmt.Errorf("gateway: close invalidation bus: %w", berr))
	}
	if g.cache != nil {
		g.cache.Close()
	}
	if err != nil {
		return fmt.Errorf("gateway: shutdown: %w", err)
	}
	return nil
}

// InFlight is the number of requests the gateway is handling now, for the log of a drain that ran past its
// shutdown timeout: the requests it cut.
func (g *Gateway) InFlight() int64 { return g.active.Load() }

// Purge drops an account's cached reads and remembered credentials, here at once and, over the invalidation
// bus, on every replica: the operator's remedy when a user deleted or locked out must lose access before
// auth.ttl has passed. Every credential of the account is then checked with the core again.
func (g *Gateway) Purge(account string) {
	if g.cache != nil {
		g.cache.Invalidate(account)
	}
	g.creds.forgetAccount(account)
	g.bus.Purge(account)
}

// Stats are counters of one gateway, for tests and benchmarks.
type Stats struct {
	UpstreamRequests uint64 // requests sent to the core
	DelayedLogins    uint64 // login attempts that waited past the failed-login limit of all addresses (stranger.go)
	OpenConns        int64  // client connections open (the connection table's count, conns.go)
	Cache            cache.Stats
	Upstreams        []UpstreamStats // per core, when there are several
}

// Stats returns the gateway's counters.
func (g *Gateway) Stats() Stats {
	s := Stats{UpstreamRequests: g.upstreamCalls.Load(), DelayedLogins: g.strangers.delayed.Load(),
		OpenConns: g.openConns.Load()}
	if g.cache != nil {
		s.Cache = g.cache.Stats()
	}
	if g.up.balancer != nil {
		s.Upstreams = g.up.balancer.stats()
	}
	return s
}

// serverError answers what fasthttp refuses before the handler runs: 413 for a body over the limit (the
// core never sees it), 408 for a slow request (a head later than the head timeout among them), 503 for a
// request head the connection table cut short to make room (conns.go), 431 for a header block over the read
// buffer, 505 for an HTTP version that is not HTTP/d.d, 400 for anything else malformed, with the reason when
// the line guard (strictconn.go) refused it. The connection is closed: after a request it could not parse, the server
// cannot tell where the next one starts.
func (g *Gateway) serverError(ctx *fasthttp.RequestCtx, err error) {
	var status int
	var msg string
	var te interface{ Timeout() bool }
	var le lineError
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, errShed):
		status, msg = fasthttp.StatusServiceUnavailable, "The gateway is at its connection limit; retry."
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		status, msg = fasthttp.StatusRequestEntityTooLarge, bodyTooLargeMessage(g.opt.MaxBodyBytes)
	case errors.As(err, &le):
		status, msg = fasthttp.StatusBadRequest, string(le)
	case errors.As(err, &te) && te.Timeout():
		status, msg = fasthttp.StatusRequestTimeout, "The request was not received in time."
	case errors.As(err, &small):
		status, msg = fasthttp.StatusRequestHeaderFieldsTooLarge, "The request header is too large."
	case strings.Contains(err.Error(), "unsupported http version"):
		// fasthttp has no error value for it, only this text (with or without SecureErrorLogMessage).
		status, msg = fasthttp.StatusHTTPVersionNotSupported, "The HTTP version is not supported; use HTTP/1.1."
	default:
		status, msg = fasthttp.StatusBadRequest, "The request is malformed."
	}
	requestCounter(requestLabels{route: "unknown", code: status}).Inc(0)
	writeXMLError(ctx, status, msg)
	if status == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.Set("Retry-After", "1")
	}
	ctx.SetConnectionClose()
}

func bodyTooLargeMessage(limit int) string {
	return fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit)
}

// serverLog passes fasthttp's own log lines to the gateway's logger. With SecureErrorLogMessage set they do
// not quote the request, which could hold an Authorization header.
//
// Most are about one connection the server stopped serving: a request it could not parse, a TLS handshake that
// failed, a client gone mid-request. Those are the client's doing, and any client can cause one per connection
// it opens, so logging each at warn would let a flood of junk connections flood the log (each warning is written
// before the request goes on) and bury the warnings an operator must see. They are counted
// (reqgate_gateway_connection_errors_total), logged each at debug, and at warn at most once per every, with the
// number seen since the last such warning. nginx logs these client errors at info for the same reason.
type serverLog struct {
	log      *slog.Logger
	every    time.Duration
	mu       sync.Mutex
	next     time.Time // when a connection error may be warned about again
	unwarned int       // connection errors since the last warning
}

// connErrorFormat is the format of fasthttp's line about one connection's error (its worker pool's).
const connErrorFormat = "error when serving connection %q<->%q: %v"

func (l *serverLog) Printf(format string, args ...any) {
	ctx := context.Background()
	if format != connErrorFormat {
		if l.log.Enabled(ctx, slog.LevelWarn) {
			l.log.Warn("http server: " + fmt.Sprintf(format, args...))
		}
		return
	}
	connectionErrors.Inc()
	now := time.Now()
	l.mu.Lock()
	l.unwarned++
	n, warn := l.unwarned, !now.Before(l.next)
	if warn {
		l.next, l.unwarned = now.Add(l.every), 0
	}
	l.mu.Unlock()
	switch {
	case warn && l.log.Enabled(ctx, slog.LevelWarn):
		l.log.Warn("http server: "+fmt.Sprintf(format, args...), "connection_errors", n,
			"note", "client connection errors are logged at debug; at warn at most once per "+l.every.String())
	case l.log.Enabled(ctx, slog.LevelDebug):
		l.log.Debug("http server: " + fmt.Sprintf(format, args...))
	}
}

// ErrRedisNotReady is wrapped by the error of Ready when the upstream answered and Redis did not, so that a
// caller may leave Redis out of a check (the admin listener's /readyz?exclude=redis): the gateway serves
// without Redis, limiting on its own under ratelimit.on_redis_error local or allow.
var ErrRedisNotReady = errors.New("redis")

// Ready reports whether the upstream answers /readyz (and Redis, when configured, answers PING): the
// gateway's /readyz, for an admin listener of the caller's own.
func (g *Gateway) Ready() error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(g.up.prefix + "/readyz")
	req.Header.SetHost(g.up.host)
	if hc, ok := g.up.client.(*fasthttp.HostClient); ok {
		schemeFor(req, hc) // an https core's client refuses a request of scheme http (the balancer sets it itself)
	}
	if err := g.up.client.DoTimeout(req, resp, min(g.opt.UpstreamTimeout, 2*time.Second)); err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return fmt.Errorf("upstream /readyz: status %d", resp.StatusCode())
	}
	if g.opt.Redis != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := g.opt.Redis.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("%w: %w", ErrRedisNotReady, err)
		}
	}
	return nil
}

// start is when a request began by the gateway's clock. With the wall clock it is the time the server read as
// the request arrived (reading the clock costs about as much as a cache lookup on some virtual machines).
func (g *Gateway) start(ctx *fasthttp.RequestCtx) time.Time {
	if t := ctx.Time(); g.opt.wallClock && !t.IsZero() {
		return t
	}
	return g.opt.Now()
}

// end is when a request that began at start ended: with the wall clock, start plus the monotonic time since
// (cheaper to read than the wall clock).
func (g *Gateway) end(start time.Time) time.Time {
	if g.opt.wallClock {
		return start.Add(time.Since(start))
	}
	return g.opt.Now()
}
