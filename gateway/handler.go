package gateway

import (
	"context"
	"log/slog"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/gateway/tenants"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// exchange is the state of one request as it passes the stages, with buffers of its own. Exchanges are
// pooled: nothing may keep a pointer to one, or a string of its buffers, past the request.
type exchange struct {
	state
	idBuf      [128]byte // reqID
	ipBuf      [48]byte  // ip
	rlBuf      [64]byte  // the RateLimit value
	keyBuf     [256]byte // the cache key of the XML form
	jsonKeyBuf [256]byte // the cache key of the JSON form
}

// state is what an exchange starts each request from zero with (its buffers need no clearing).
type state struct {
	ctx         *fasthttp.RequestCtx
	conn        *conn          // the connection the request came on, with its memos and stripe; nil: not one the gateway accepted
	hdr         requestHeaders // the headers every stage may read, in the request's buffer
	rt          route.Route
	cacheable   bool   // rt's reads may be cached (rt.Cacheable, looked up once)
	badTarget   error  // the target did not parse (rt is then empty)
	reqID       string // in idBuf: valid during the request only (logID copies it for the log)
	ip          string
	now         time.Time // when the request began, by the gateway's clock: credential and cache freshness
	host        string    // Host as the caller sent it (or a trusted proxy's X-Forwarded-Host): see callerHost
	hostRead    bool
	proto       string         // scheme the caller used: "http" or "https" (or a trusted proxy's X-Forwarded-Proto)
	live        *live          // the live settings as the request started (identify)
	proxies     []netip.Prefix // the trusted proxy networks when the connection comes from one, else nil
	cred        credential
	verified    bool   // the core proved the credential (now, or within AuthTTL)
	ipCharged   bool   // the ip rate policies were charged before verification
	announced   bool   // the request announced a body (Content-Length > 0, or chunked)
	bodyRead    bool   // the request body was read (and is forwarded); an unread one closes the connection
	budget      int64  // bytes of the body budget held, given back at the end
	json        bool   // the caller's Accept prefers JSON
	accept      int    // the content codings the caller accepts (acceptGzip, acceptBrotli)
	ifNoneMatch []byte // the caller's If-None-Match, in the request's buffer
	noCache     bool   // the caller asked to revalidate (Cache-Control: no-cache, Pragma: no-cache)
	cacheRes    string // X-Cache value, "" when not a cacheable read
	coreStatus  int    // status the core gave this caller's request, 0 when it was not asked
	core        string // host:port of the core whose answer (or failure) the caller got; "" when none (coreOf)
	userAgent   []byte // the caller's User-Agent, taken before the upstream client may fill in its own
	upstream    time.Duration
	uploading   time.Duration  // how long the caller took to send the body (body.go): not a wait (deadline.go)
	held        time.Duration  // how long a rate policy held the request for its slot (limit.go): not a stall either
	throttled   bool           // a rate policy refused the request (limit.go)
	extra       []cache.Header // response headers of the gateway's own (request id, CORS, rate limits), set last
	extraBuf    [4]cache.Header
	extraSet    int             // how many of extra are in the response already (writeExtra)
	span        trace.Span      // the request's server span; nil while tracing is off (tracing.go)
	tctx        context.Context // the context of the current span, the parent of the next one
	recording   bool            // span is recorded (sampled): only then do the stages get spans of their own

	// The body's place in the budget and its upload (body.go, bodyshare.go, expect.go).
	shareAccount string     // whose shares of the budget the body's reservation is in: its account
	shareAddr    netip.Addr // and its client address (invalid: not counted)
	bodyFrom     time.Time  // when 100 Continue asked for the body (zero: the body is read when asked for)
	tooSlow      bool       // the body arrived slower than MinUploadRate: the connection closes undrained
	expecting    bool       // the request runs in the server's ExpectHandler: the body stage pauses
	expectAt     time.Time  // when the ExpectHandler took the request (zero: the handler did; see readAt)
	paused       bool       // the request paused before its body, for the handler to run on
	stage        int        // the pipeline stage that answered or paused (run)
}

// clientIP is the caller's address as text, formatted on first use (a cache hit needs none).
//
// Behind a trusted proxy it is the nearest address in X-Forwarded-For that is not a trusted proxy (see
// forwardedClient), so that per-IP login limits and rate policies count callers, not the proxy.
func (x *exchange) clientIP() string {
	if x.ip == "" {
		if x.proxies != nil {
			x.ip, _ = forwardedClient(x.ctx.Request.Header.PeekAll("X-Forwarded-For"), x.proxies)
		}
		if x.ip == "" {
			// Formatted into the exchange: the limiter and the failure counts copy what they keep.
			a, _ := netip.AddrFromSlice(x.ctx.RemoteIP())
			b := a.Unmap().AppendTo(x.ipBuf[:0])
			x.ip = unsafe.String(unsafe.SliceData(b), len(b))
		}
	}
	return x.ip
}

// readAt is when the server had read the request's head: the server's reading of the clock for the handler or,
// for a request the ExpectHandler took (the server reads the clock only after it), that handler's own.
func (x *exchange) readAt() time.Time {
	if !x.expectAt.IsZero() {
		return x.expectAt
	}
	return x.ctx.Time()
}

// callerHost is the host the caller used (or a trusted proxy's X-Forwarded-Host), read on first use: before
// the request is turned into the upstream's (forwardedHeaders runs first), and never on a cache hit. It is the
// authority of an absolute-form target, which wins over Host (RFC 9112 §3.2.2), else the Host. An HTTP/1.0
// request may name no host: then it is the address the caller connected to, so that a Location still names
// this gateway ("http:///..." would name nothing, and the core's own address is not the caller's to see).
func (x *exchange) callerHost() string {
	if !x.hostRead {
		h := &x.ctx.Request.Header
		if auth, ok := route.Authority(h.RequestURI()); ok {
			x.host = string(auth)
		} else {
			x.host = string(h.Host())
		}
		x.hostRead = true
		if x.host == "" {
			x.host = x.ctx.LocalAddr().String()
		}
	}
	return x.host
}

// logID is the request id for a log record, copied out of the pooled exchange (a log handler may keep it).
func (x *exchange) logID() string { return strings.Clone(x.reqID) }

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// addHeader queues a response header that must survive whatever the upstream answer replaces. k is written as
// fasthttp writes header names ("Ratelimit-Policy", not "RateLimit-Policy"): finish sets it without normalising
// it again, and a header of the upstream's under that name must be found and replaced.
func (x *exchange) addHeader(k, v string) { x.extra = append(x.extra, cache.Header{Key: k, Value: v}) }

// writeExtra sets the headers addHeader queued since it last ran in the response: each replaces the upstream's
// of its name, but Vary, which adds to it.
func (x *exchange) writeExtra() {
	h := &x.ctx.Response.Header
	for _, e := range x.extra[x.extraSet:] {
		if e.Key == "Vary" {
			h.Add(e.Key, e.Value)
		} else {
			h.SetCanonical(s2b(e.Key), s2b(e.Value))
		}
	}
	x.extraSet = len(x.extra)
}

// handle serves one request: it runs the stages of pipeline.go in order until one answers, then finish does
// the accounting. It never lets a panic escape: the caller gets 500 and the log the stack. A request the
// ExpectHandler paused before its body (expect.go) is run on from its body.
func (g *Gateway) handle(ctx *fasthttp.RequestCtx) {
	c := connOf(ctx.Conn())
	stripe := c.stripeOf()
	g.active.Add(stripe, 1)
	defer g.active.Add(stripe, -1)
	// Only a request with a body can have paused (a read never looks).
	if n := ctx.Request.Header.ContentLength(); n > 0 || n == -1 {
		if p, ok := ctx.UserValue(pausedKey{}).(*pausedExchange); ok {
			ctx.RemoveUserValue(pausedKey{})
			g.run(p.x)
			return
		}
	}
	g.run(g.begin(ctx, c, g.start(ctx)))
}

// begin takes an exchange for a request on connection c (nil: not one the gateway accepted) that began at now.
func (g *Gateway) begin(ctx *fasthttp.RequestCtx, c *conn, now time.Time) *exchange {
	x := exchanges.Get().(*exchange)
	x.state = state{ctx: ctx, conn: c, rt: route.Route{Class: route.Unknown}, now: now}
	x.extra = x.extraBuf[:0]
	if g.tracer != nil {
		g.startTrace(x)
	}
	return x
}

// run runs x's stages from the one it is at until one answers, then finish. A request that paused before its
// body is left as it is, to be run on.
func (g *Gateway) run(x *exchange) {
	defer func() {
		if p := recover(); p != nil {
			panicsTotal.Inc()
			g.log.Error("panic serving request", "request_id", x.logID(), "panic", p, "stack", string(debug.Stack()))
			g.respondError(x, fasthttp.StatusInternalServerError, "Internal gateway error.")
			x.paused = false
		}
		if x.paused {
			return
		}
		g.finish(x)
		x.state = state{}
		exchanges.Put(x)
	}()
	for i := x.stage; i < len(pipeline); i++ {
		if !pipeline[i](g, x) {
			x.stage = i
			return
		}
	}
}

// finish does the accounting of a request: metrics, the access log, the body budget. It never logs the
// Authorization header or a password.
func (g *Gateway) finish(x *exchange) {
	ctx := x.ctx
	x.writeExtra()
	g.releaseBody(x)
	if x.announced && !x.bodyRead {
		// What is left of the body is still on the connection: it must never be read as the next request.
		ctx.SetConnectionClose()
		if !x.tooSlow {
			drainBody(ctx)
		}
	}
	status := ctx.Response.StatusCode()
	if status == fasthttp.StatusUnauthorized && len(ctx.Request.Header.Peek("Origin")) > 0 {
		// A page's request gets the error document without a Basic challenge: a browser shows its own login
		// dialog for one (and a headless fetch never completes), where the page wants to handle the 401 itself.
		ctx.Response.Header.Del("WWW-Authenticate")
	}
	end := g.end(x.now)
	elapsed := max(end.Sub(x.now), 0)
	var memo *metricsMemo
	var lineMemo *accesslog.Memo
	if c := x.conn; c != nil {
		memo, lineMemo = &c.metrics, &c.access
	}
	memo.observe(x.conn.stripeOf(), x.rt.Class, status, x.cacheRes, elapsed, x.upstream)
	if x.verified {
		// Only a proved caller's account may become a label: a stranger can name any api_key.
		g.tenants.Count(x.conn.stripeOf(), x.rt.APIKey, end, tenants.Outcome{Status: status, Hit: x.cacheRes == cacheHit, Throttled: x.throttled})
	}
	var sc trace.SpanContext
	if x.span != nil {
		sc = g.endTrace(x, methodName(ctx.Method()), status)
	}
	if !g.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	traceID := ""
	if sc.IsValid() {
		traceID = sc.TraceID().String()
	}
	e := accesslog.Entry{
		RequestID: x.reqID, Method: methodName(ctx.Method()), Path: x.rt.Path, Route: string(x.rt.Class),
		Account: x.rt.APIKey, User: x.cred.user, IP: x.clientIP(), Status: status, Bytes: sentBytes(ctx, status),
		Cache: x.cacheRes, Core: x.core, Upstream: x.upstream, Duration: elapsed, TraceID: traceID,
		UserAgent: b2s(x.userAgent), // in the request's header: the Logger copies it at once
	}
	if g.opt.AccessLog != nil {
		_ = g.opt.AccessLog.LogWith(end, &e, lineMemo)
		return
	}
	e.RequestID, e.UserAgent = x.logID(), strings.Clone(e.UserAgent)
	g.log.LogAttrs(context.Background(), slog.LevelInfo, "request", e.Attrs()...)
}

// sentBytes is the length of the response body the server sends: none for HEAD, 1xx, 204 and 304.
func sentBytes(ctx *fasthttp.RequestCtx, status int) int {
	if ctx.IsHead() || status < 200 || status == fasthttp.StatusNoContent || status == fasthttp.StatusNotModified {
		return 0
	}
	return len(ctx.Response.Body())
}

// b2s is b as a string without a copy: valid while b is.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// methodName is the method as a string, without allocating for the methods of the interface.
func methodName(m []byte) string {
	for _, s := range [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"} {
		if string(m) == s {
			return s
		}
	}
	return string(m)
}

// requestHeaders are the request headers every request reads, found in one pass over the header list
// (each fasthttp Peek normalises its key and scans the list again). The slices point into the request's
// buffer: they are read before anything changes the request for forwarding.
type requestHeaders struct {
	requestID, accept, authorization, cacheControl, pragma, origin, acceptEncoding, ifNoneMatch []byte
}

// scanHeaders finds the headers of requestHeaders, the first of each name. Header names are in canonical
// form here: the server normalises them as it parses (fasthttp's default).
func scanHeaders(h *fasthttp.RequestHeader) (r requestHeaders) {
	for k, v := range h.All() {
		var dst *[]byte
		switch string(k) {
		case headerRequestID:
			dst = &r.requestID
		case "Accept":
			dst = &r.accept
		case "Authorization":
			dst = &r.authorization
		case "Cache-Control":
			dst = &r.cacheControl
		case "Pragma":
			dst = &r.pragma
		case "Origin":
			dst = &r.origin
		case "Accept-Encoding":
			dst = &r.acceptEncoding
		case "If-None-Match":
			dst = &r.ifNoneMatch
		default:
			continue
		}
		if *dst == nil {
			*dst = v
		}
	}
	return r
}
