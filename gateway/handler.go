package gateway

import (
	"log/slog"
	"net/netip"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/gateway/accesslog"
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

// exchange is the state of one request as it passes the stages.
type exchange struct {
	ctx        *fasthttp.RequestCtx
	rt         route.Route
	reqID      string
	ip         string
	now        time.Time      // when the request began, by the gateway's clock: credential and cache freshness
	host       string         // Host as the caller sent it (or a trusted proxy's X-Forwarded-Host)
	proto      string         // scheme the caller used: "http" or "https" (or a trusted proxy's X-Forwarded-Proto)
	proxies    []netip.Prefix // the trusted proxy networks when the connection comes from one, else nil
	cred       credential
	verified   bool   // the credential was accepted by the core within AuthTTL
	json       bool   // the caller's Accept prefers JSON
	noCache    bool   // the caller asked to revalidate (Cache-Control: no-cache, Pragma: no-cache)
	cacheRes   string // X-Cache value, "" when not a cacheable read
	coreStatus int    // status the core gave this caller's own request, 0 when it was not asked
	upstream   time.Duration
	extra      []cache.Header // response headers of the gateway's own (request id, CORS, rate limits), set last
	extraBuf   [4]cache.Header
}

// clientIP is the caller's address as text, formatted on first use (a cache hit needs none).
//
// Behind a trusted proxy it is the nearest address in X-Forwarded-For that is not a trusted proxy (see
// forwardedClient), so that per-IP login limits and rate policies count callers, not the proxy.
func (x *exchange) clientIP() string {
	if x.ip == "" {
		if x.proxies != nil {
			x.ip = forwardedClient(x.ctx.Request.Header.Peek("X-Forwarded-For"), x.proxies)
		}
		if x.ip == "" {
			x.ip = x.ctx.RemoteIP().String()
		}
	}
	return x.ip
}

// addHeader queues a response header that must survive whatever the upstream answer replaces.
func (x *exchange) addHeader(k, v string) { x.extra = append(x.extra, cache.Header{Key: k, Value: v}) }

// handle serves one request. It never lets a panic escape: the caller gets 500 and the log the stack.
func (g *Gateway) handle(ctx *fasthttp.RequestCtx) {
	x := exchange{ctx: ctx, rt: route.Route{Class: route.Unknown}, now: g.now()}
	x.extra = x.extraBuf[:0]
	defer func() {
		if p := recover(); p != nil {
			panicsTotal.Inc()
			g.log.Error("panic serving request", "request_id", x.reqID, "panic", p, "stack", string(debug.Stack()))
			g.writeErr(&x, fasthttp.StatusInternalServerError, "Internal gateway error.")
		}
		g.finish(&x)
	}()

	hdr := scanHeaders(&ctx.Request.Header)
	if validRequestID(hdr.requestID) {
		x.reqID = string(hdr.requestID)
	} else {
		x.reqID = g.ids.next()
	}
	x.addHeader(headerRequestID, x.reqID)

	x.json = translate.WantsJSON(hdr.accept)
	x.noCache = noCache(hdr.cacheControl, hdr.pragma)
	if !g.strict(&x) {
		return
	}
	rt, err := route.Parse(ctx.RequestURI())
	if err != nil {
		g.writeErr(&x, fasthttp.StatusBadRequest, "Malformed request target: "+err.Error()+".")
		return
	}
	x.rt = rt
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
	}
	if g.cors != nil && g.corsHeaders(&x, hdr.origin) {
		return // a preflight, answered
	}
	x.host = string(ctx.Request.Header.Host())
	x.proto = scheme(ctx)
	if g.fromTrustedProxy(ctx) {
		x.proxies = g.proxies
		forwardedOrigin(&x)
	}

	if rt.APIKey != "" {
		x.addHeader("Vary", "Accept")
		x.cred = g.creds.parse(hdr.authorization, rt.APIKey)
		x.verified = g.creds.verified(x.cred, x.now)
		if !x.verified {
			if wait := g.fails.blocked(x.clientIP(), rt.APIKey, x.cred.user); wait > 0 {
				authBlocked.Inc()
				secs := int((wait + time.Second - 1) / time.Second)
				g.writeErr(&x, fasthttp.StatusTooManyRequests,
					"Too many failed authentication attempts. Try again after the time in Retry-After (in seconds).")
				x.addHeader("Retry-After", strconv.Itoa(max(secs, 1)))
				return
			}
		}
		if rt.Class == route.Throttle && ctx.IsGet() {
			// Answered here (spec Part 2), never counted; "yes" when no limiter is configured.
			if x.verified || g.verifyWithCore(&x) {
				g.throttleStatus(&x, ratelimit.Request{APIKey: rt.APIKey, User: x.cred.user, IP: x.clientIP()})
			}
			return
		}
		if g.limiter != nil {
			user := "" // only a verified user name counts under a user policy
			if x.verified {
				user = x.cred.user
			}
			if !g.admit(&x, ratelimit.Request{APIKey: rt.APIKey, User: user, IP: x.clientIP()}) {
				return
			}
		}
	}

	if (ctx.IsPost() || ctx.IsPut()) && !g.translateRequest(&x) {
		return
	}
	switch {
	case ctx.IsGet() && rt.Cacheable() && g.cache != nil:
		g.read(&x)
	default:
		g.forward(&x)
	}
}

// finish does the accounting of a request: credential bookkeeping from the core's answer, metrics, the
// access log. It never logs the Authorization header or a password.
func (g *Gateway) finish(x *exchange) {
	ctx := x.ctx
	for _, h := range x.extra {
		if h.Key == "Vary" {
			ctx.Response.Header.Add(h.Key, h.Value)
		} else {
			ctx.Response.Header.Set(h.Key, h.Value)
		}
	}
	status := ctx.Response.StatusCode()
	if x.rt.APIKey != "" && x.coreStatus != 0 {
		switch {
		case x.coreStatus == fasthttp.StatusUnauthorized:
			authFailures.Inc()
			g.creds.forget(x.cred)
			if x.cred.present {
				// A request without credentials (a client's first, challenged try) guesses nothing.
				g.fails.record(x.clientIP(), x.rt.APIKey, x.cred.user)
			}
		case x.coreStatus >= 200 && x.coreStatus < 300 && !x.verified && x.cred.present:
			// The core authenticates every /api{N}/{key}/ request before anything else, so a 2xx proves the
			// credential for this key.
			authVerifications.Inc()
			g.creds.remember(x.cred)
		}
	}
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
		RequestID: x.reqID, Method: string(ctx.Method()), Path: x.rt.Path, Route: string(x.rt.Class),
		Account: x.rt.APIKey, User: x.cred.user, IP: x.clientIP(), Status: status, Cache: x.cacheRes,
		Upstream: x.upstream, Duration: elapsed,
	}
	if g.opt.AccessLog != nil {
		_ = g.opt.AccessLog.Log(end, &e)
		return
	}
	g.log.LogAttrs(nil, slog.LevelInfo, "request", e.Attrs()...) //nolint:staticcheck
}

// requestHeaders are the request headers every request reads, found in one pass over the header list
// (each fasthttp Peek normalises its key and scans the list again). The slices point into the request's
// buffer: they are read before anything changes the request for forwarding.
type requestHeaders struct {
	requestID, accept, authorization, cacheControl, pragma, origin []byte
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
		default:
			continue
		}
		if *dst == nil {
			*dst = v
		}
	}
	return r
}

// corsHeaders adds CORS headers for an allowed Origin and answers a preflight (returning true).
func (g *Gateway) corsHeaders(x *exchange, origin []byte) bool {
	ctx := x.ctx
	if len(origin) == 0 {
		return false
	}
	x.addHeader("Vary", "Origin")
	if !g.cors[string(origin)] && !g.cors["*"] {
		return false
	}
	x.addHeader("Access-Control-Allow-Origin", string(origin))
	x.addHeader("Access-Control-Allow-Credentials", "true")
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
