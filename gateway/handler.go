package gateway

import (
	"log/slog"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/gateway/openapi"
	"github.com/reqgate/reqgate/gateway/route"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/translate"
)

// X-Cache values.
const (
	cacheHit    = "HIT"
	cacheMiss   = "MISS"
	cacheStale  = "STALE"
	cacheBypass = "BYPASS"
)

// exchange is the state of one request as it passes the stages, with buffers of its own. Exchanges are
// pooled: nothing may keep a pointer to one, or a string of its buffers, past the request.
type exchange struct {
	state
	idBuf      [128]byte // reqID
	keyBuf     [256]byte // the cache key of the XML form
	jsonKeyBuf [256]byte // the cache key of the JSON form
}

// state is what an exchange starts each request from zero with (its buffers need no clearing).
type state struct {
	ctx         *fasthttp.RequestCtx
	rt          route.Route
	reqID       string // in idBuf: valid during the request only (logID copies it for the log)
	ip          string
	now         time.Time // when the request began, by the gateway's clock: credential and cache freshness
	host        string    // Host as the caller sent it (or a trusted proxy's X-Forwarded-Host): see callerHost
	hostRead    bool
	proto       string         // scheme the caller used: "http" or "https" (or a trusted proxy's X-Forwarded-Proto)
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
	upstream    time.Duration
	extra       []cache.Header // response headers of the gateway's own (request id, CORS, rate limits), set last
	extraBuf    [4]cache.Header
}

// clientIP is the caller's address as text, formatted on first use (a cache hit needs none).
//
// Behind a trusted proxy it is the nearest address in X-Forwarded-For that is not a trusted proxy (see
// forwardedClient), so that per-IP login limits and rate policies count callers, not the proxy.
func (x *exchange) clientIP() string {
	if x.ip == "" {
		if x.proxies != nil {
			x.ip = forwardedClient(x.ctx.Request.Header.PeekAll("X-Forwarded-For"), x.proxies)
		}
		if x.ip == "" {
			x.ip = x.ctx.RemoteIP().String()
		}
	}
	return x.ip
}

// callerHost is the Host the caller used (or a trusted proxy's X-Forwarded-Host), read on first use: before
// the request is turned into the upstream's (forwardedHeaders runs first), and never on a cache hit.
func (x *exchange) callerHost() string {
	if !x.hostRead {
		x.host, x.hostRead = string(x.ctx.Request.Header.Host()), true
	}
	return x.host
}

// logID is the request id for a log record, copied out of the pooled exchange (a log handler may keep it).
func (x *exchange) logID() string { return strings.Clone(x.reqID) }

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// addHeader queues a response header that must survive whatever the upstream answer replaces.
func (x *exchange) addHeader(k, v string) { x.extra = append(x.extra, cache.Header{Key: k, Value: v}) }

// handle serves one request. It never lets a panic escape: the caller gets 500 and the log the stack.
func (g *Gateway) handle(ctx *fasthttp.RequestCtx) {
	x := exchanges.Get().(*exchange)
	x.state = state{ctx: ctx, rt: route.Route{Class: route.Unknown}, now: g.now()}
	x.extra = x.extraBuf[:0]
	defer func() {
		if p := recover(); p != nil {
			panicsTotal.Inc()
			g.log.Error("panic serving request", "request_id", x.logID(), "panic", p, "stack", string(debug.Stack()))
			g.writeErr(x, fasthttp.StatusInternalServerError, "Internal gateway error.")
		}
		g.finish(x)
		x.state = state{}
		exchanges.Put(x)
	}()

	hdr := scanHeaders(&ctx.Request.Header)
	id := x.idBuf[:0]
	if validRequestID(hdr.requestID) {
		id = append(id, hdr.requestID...)
	} else {
		id = g.ids.appendNext(id)
	}
	x.reqID = unsafe.String(&x.idBuf[0], len(id))
	x.addHeader(headerRequestID, x.reqID)

	x.json = translate.WantsJSON(hdr.accept)
	x.accept = acceptedEncodings(hdr.acceptEncoding)
	x.ifNoneMatch = hdr.ifNoneMatch
	x.noCache = noCache(hdr.cacheControl, hdr.pragma)
	if !g.strict(x) {
		return
	}
	rt, err := g.routes.parse(ctx.RequestURI())
	if err != nil {
		g.writeErr(x, fasthttp.StatusBadRequest, "Malformed request target: "+err.Error()+".")
		return
	}
	x.rt = rt
	// Content-Length, -1 for a chunked body, -2 for none given (which for a request means no body).
	if n := ctx.Request.Header.ContentLength(); n > 0 || n == -1 {
		x.announced = true
		if n > g.opt.MaxBodyBytes {
			// Refused before anything else, whoever asks: it would be refused after authentication too.
			g.tooLarge(x)
			return
		}
	}
	switch rt.Path {
	case "/healthz":
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("ok\n")
		return
	case "/readyz":
		ctx.SetContentType("text/plain; charset=utf-8")
		if err := g.Ready(); err != nil {
			g.log.Warn("readyz: not ready", "err", err)
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.SetBodyString("not ready\n")
			return
		}
		ctx.SetBodyString("ready\n")
		return
	case "/openapi.json":
		// The interface's description: public, like the health endpoints, and the same for every caller.
		ctx.SetContentType("application/json")
		ctx.SetBody(openapi.JSON())
		return
	}
	if g.cors != nil && g.corsHeaders(x, hdr.origin) {
		return // a preflight, answered
	}
	x.proto = scheme(ctx)
	if g.fromTrustedProxy(ctx) {
		x.proxies = g.proxies
		forwardedOrigin(x)
	}
	if rt.APIKey == "" {
		// Not the API: the core answers it (404) without anything of the caller's; no body is read.
		g.forward(x)
		return
	}

	if rt.Cacheable() && ctx.IsGet() {
		x.addHeader("Vary", "Accept, Accept-Encoding")
		x.cacheRes = cacheMiss // until a stage says otherwise
	} else {
		x.addHeader("Vary", "Accept")
	}
	x.cred, x.verified = g.creds.checkOn(ctx.Conn(), hdr.authorization, rt.APIKey, x.now)
	if !x.verified && !g.authenticate(x, hdr.authorization) {
		return
	}
	// The credential is proved from here on.
	if rt.Class == route.Throttle && ctx.IsGet() {
		// Answered here, never counted; "yes" when no limiter is configured.
		g.throttleStatus(x, ratelimit.Request{APIKey: rt.APIKey, User: x.cred.user, IP: x.clientIP()})
		return
	}
	if g.limiter != nil {
		r := ratelimit.Request{APIKey: rt.APIKey, User: x.cred.user}
		if !x.ipCharged {
			r.IP = x.clientIP()
		}
		if !g.admit(x, r) {
			return
		}
	}
	if ctx.IsPost() || ctx.IsPut() {
		if !g.readBody(x) || !g.translateRequest(x) {
			return
		}
	}
	switch {
	case ctx.IsGet() && rt.Cacheable() && g.cache != nil:
		g.read(x)
	default:
		g.forward(x)
	}
}

// finish does the accounting of a request: metrics, the access log, the body budget. It never logs the
// Authorization header or a password.
func (g *Gateway) finish(x *exchange) {
	ctx := x.ctx
	for _, h := range x.extra {
		if h.Key == "Vary" {
			ctx.Response.Header.Add(h.Key, h.Value)
		} else {
			ctx.Response.Header.Set(h.Key, h.Value)
		}
	}
	if x.budget > 0 {
		g.budget.give(x.budget)
	}
	if x.announced && !x.bodyRead {
		// What is left of the body is still on the connection: it must never be read as the next request.
		ctx.SetConnectionClose()
	}
	if x.verified && x.coreStatus == fasthttp.StatusUnauthorized {
		// The core refused a credential it had proved (a changed password, a locked user): stop trusting it
		// at once.
		g.creds.forget(x.cred)
	}
	status := ctx.Response.StatusCode()
	end := g.now()
	elapsed := max(end.Sub(x.now), 0)
	countRequest(x.rt.Class, status, x.cacheRes)
	histogram("request", x.rt.Class).Update(elapsed.Seconds())
	if x.upstream > 0 {
		histogram("upstream", x.rt.Class).Update(x.upstream.Seconds())
	}
	if g.opt.AccessLog == nil && !g.log.Enabled(nil, slog.LevelInfo) { //nolint:staticcheck // slog accepts a nil context
		return
	}
	e := accesslog.Entry{
		RequestID: x.reqID, Method: methodName(ctx.Method()), Path: x.rt.Path, Route: string(x.rt.Class),
		Account: x.rt.APIKey, User: x.cred.user, IP: x.clientIP(), Status: status, Cache: x.cacheRes,
		Upstream: x.upstream, Duration: elapsed,
	}
	if g.opt.AccessLog != nil {
		_ = g.opt.AccessLog.Log(end, &e)
		return
	}
	e.RequestID = x.logID()
	g.log.LogAttrs(nil, slog.LevelInfo, "request", e.Attrs()...) //nolint:staticcheck
}

// methodName is the method as a string, without allocating for the methods of the interface.
func methodName(m []byte) string {
	for _, s := range [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"} {
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

// corsHeaders adds CORS headers for an allowed Origin and answers a preflight (returning true). A listed
// origin is reflected with credentials allowed; "*" allows every other origin without credentials.
func (g *Gateway) corsHeaders(x *exchange, origin []byte) bool {
	ctx := x.ctx
	if len(origin) == 0 {
		return false
	}
	x.addHeader("Vary", "Origin")
	switch o := string(origin); {
	case o == "null":
		// Sandboxed frames, file: pages and redirects all send "null": allowing it allows anyone.
		return false
	case g.cors[o]:
		x.addHeader("Access-Control-Allow-Origin", o)
		x.addHeader("Access-Control-Allow-Credentials", "true")
	case g.cors["*"]:
		// Any origin, but never with the browser's own credentials: a page that sends Authorization itself
		// still works (Access-Control-Allow-Headers below), and no site rides on a logged-in browser.
		x.addHeader("Access-Control-Allow-Origin", "*")
	default:
		return false
	}
	x.addHeader("Access-Control-Expose-Headers", "X-Request-Id, X-Cache, Age, Location, Retry-After, RateLimit, RateLimit-Policy")
	if ctx.IsOptions() && len(ctx.Request.Header.Peek("Access-Control-Request-Method")) > 0 {
		x.addHeader("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
		x.addHeader("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, X-Request-Id, Cache-Control")
		x.addHeader("Access-Control-Max-Age", "600")
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return true
	}
	return false
}
