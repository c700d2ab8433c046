package gateway

import (
	"unsafe"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/gateway/openapi"
	"github.com/reqgate/reqgate/internal/wire/route"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/translate"
)

// A stage handles one concern of a request. It returns false when it has answered the request, which ends the
// pipeline; finish then does the accounting of every request alike, however it ended.
type stage func(g *Gateway, x *exchange) bool

// pipeline is the order every request goes through (docs/design.md, "The gateway").
var pipeline = [...]stage{
	(*Gateway).identify, // the request id; what the caller accepts
	(*Gateway).strict,   // the HTTP/1.1 rules fasthttp does not enforce (strict.go)
	(*Gateway).route,    // the one normalisation of the target
	(*Gateway).cors,     // CORS headers, before any refusal a page must be able to read; a preflight answered
	(*Gateway).refuse,   // a malformed target; a body announced over the limit
	(*Gateway).serveOwn, // the gateway's own endpoints: /healthz, /readyz, /openapi.json
	(*Gateway).origin,   // the caller's scheme, host and address behind a trusted proxy (proxies.go)
	(*Gateway).auth,     // the credential, proved by the core (auth.go, verify.go)
	(*Gateway).limit,    // the rate policies (limit.go)
	(*Gateway).body,     // a write's body, within the budget (body.go), translated from JSON (json.go)
	(*Gateway).respond,  // the throttle status, a cached read (read.go), or the core's answer (forward.go)
}

// identify takes the live settings the request runs under (live.go), gives the request its id (the caller's,
// when well formed) and notes what the caller accepts.
func (g *Gateway) identify(x *exchange) bool {
	x.live = g.live.Load()
	x.hdr = scanHeaders(&x.ctx.Request.Header)
	x.userAgent = x.ctx.Request.Header.UserAgent()
	id := x.idBuf[:0]
	if validRequestID(x.hdr.requestID) {
		id = append(id, x.hdr.requestID...)
	} else {
		id = g.ids.appendNext(id, x.conn.stripeOf())
	}
	x.reqID = unsafe.String(&x.idBuf[0], len(id))
	x.addHeader(headerRequestID, x.reqID)
	x.json = translate.WantsJSON(x.hdr.accept)
	x.accept = acceptedEncodings(x.hdr.acceptEncoding)
	x.ifNoneMatch = x.hdr.ifNoneMatch
	x.noCache = noCache(x.hdr.cacheControl, x.hdr.pragma)
	return true
}

// route normalises the target once (route.Parse; the same form is routed, keyed and forwarded). A target
// that does not parse is refused by refuse, after CORS.
func (g *Gateway) route(x *exchange) bool {
	if x.rt, x.badTarget = g.routes.parse(x.ctx.RequestURI()); x.badTarget != nil {
		x.rt.Class = route.Unknown
	}
	x.cacheable = x.rt.Cacheable()
	// Content-Length, -1 for a chunked body, -2 for none given (which for a request means no body).
	if n := x.ctx.Request.Header.ContentLength(); n > 0 || n == -1 {
		x.announced = true
	}
	return true
}

// refuse answers, whoever asks, what no later stage may see: a malformed target (400), a path with an empty
// segment (404), and a body announced over the limit (413), which would be refused after authentication too.
func (g *Gateway) refuse(x *exchange) bool {
	switch {
	case x.badTarget == route.ErrEmptySegment:
		// A path with "//" names no resource, at the core as here: the core's 404, before authentication as there.
		g.respondError(x, fasthttp.StatusNotFound, "The requested resource does not exist.")
	case x.badTarget != nil:
		g.respondError(x, fasthttp.StatusBadRequest, "Malformed request target: "+x.badTarget.Error()+".")
	case x.announced && x.ctx.Request.Header.ContentLength() > g.opt.MaxBodyBytes:
		g.tooLarge(x)
	default:
		return true
	}
	return false
}

// serveOwn answers the gateway's own endpoints: /healthz (the process lives), /readyz (Ready: the core, and
// Redis when configured) and /openapi.json (the interface's description: public, the same for every caller).
func (g *Gateway) serveOwn(x *exchange) bool {
	ctx := x.ctx
	switch x.rt.Path {
	case "/healthz", "/readyz", "/openapi.json":
		if !readMethod(ctx) {
			g.methodNotAllowed(x, "GET")
			return false
		}
	}
	switch x.rt.Path {
	case "/healthz":
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("ok\n")
	case "/readyz":
		ctx.SetContentType("text/plain; charset=utf-8")
		if err := g.Ready(); err != nil {
			g.log.Warn("readyz: not ready", "err", err)
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.SetBodyString("not ready\n")
			return false
		}
		ctx.SetBodyString("ready\n")
	case "/openapi.json":
		ctx.SetContentType("application/json")
		ctx.SetBody(openapi.JSON())
	default:
		return true
	}
	return false
}

// readMethod reports whether the request is a GET or a HEAD (a GET without the body).
func readMethod(ctx *fasthttp.RequestCtx) bool { return ctx.IsGet() || ctx.IsHead() }

// methodNotAllowed answers 405 with Allow for a path the gateway serves itself, as the core answers for its
// own: the same header, the same message.
func (g *Gateway) methodNotAllowed(x *exchange, allow string) {
	g.respondError(x, fasthttp.StatusMethodNotAllowed, "Method not allowed; this resource allows "+allow+".")
	x.ctx.Response.Header.Set("Allow", allow)
}

// cors adds the CORS headers of an allowed origin and answers its preflight.
func (g *Gateway) cors(x *exchange) bool {
	return x.live.corsOrigins == nil || !g.corsHeaders(x, x.hdr.origin)
}

// origin notes the scheme the caller used and, from a trusted proxy, the scheme, host and address the proxy
// says the caller used. A trusted proxy's X-Forwarded-For that names no caller the gateway can count (an entry
// that is not an address) is refused (400).
func (g *Gateway) origin(x *exchange) bool {
	x.proto = connScheme(x.ctx)
	if fromTrustedProxy(x.ctx, x.live.proxies) {
		x.proxies = x.live.proxies
		forwardedOrigin(x)
		ip, ok := forwardedClient(x.ctx.Request.Header.PeekAll("X-Forwarded-For"), x.proxies)
		if !ok {
			g.respondError(x, fasthttp.StatusBadRequest, "The X-Forwarded-For header holds an entry that is not an IP address.")
			return false
		}
		x.ip = ip // "" when the request is the proxy's own: clientIP then gives the proxy's address
	}
	return true
}

// auth makes sure the core has proved the credential of an API request: remembered (auth.go), or asked now
// (verify.go). Other requests carry nothing the gateway trusts and pass on to the core as they are.
func (g *Gateway) auth(x *exchange) bool {
	if x.rt.APIKey == "" {
		return true
	}
	span := g.startSpan(x, "gateway.auth", trace.SpanKindInternal) // ended without defer: this is every hit's path
	if x.cacheable && readMethod(x.ctx) {
		x.addHeader("Vary", "Accept, Accept-Encoding")
		x.cacheRes = cacheMiss // until a later stage says otherwise
	} else {
		x.addHeader("Vary", "Accept")
	}
	x.cred, x.verified = g.creds.checkOn(x.conn, x.hdr.authorization, x.rt.APIKey, x.now)
	if x.verified && x.cred.refresh {
		g.refreshAhead(x)
	}
	ok := x.verified || g.authenticate(x, x.hdr.authorization)
	x.endSpan(span)
	return ok
}

// limit charges a proved caller to the rate policies (the ip ones only when verification did not already).
// rate_throttle_status is never charged.
func (g *Gateway) limit(x *exchange) bool {
	if x.live.limiter == nil || x.rt.APIKey == "" || g.throttleStatusRequest(x) {
		return true
	}
	defer x.endSpan(g.startSpan(x, "gateway.limit", trace.SpanKindInternal))
	r := ratelimit.Request{APIKey: x.rt.APIKey, User: x.cred.user, Stripe: x.conn.stripeOf()}
	if !x.ipCharged {
		r.IP = x.clientIP()
	}
	if c := x.conn; c != nil {
		r.Memo = &c.limits
	}
	return g.admit(x, r)
}

// body reads a write's body (of an API request; others are not read) and translates a JSON body to XML.
func (g *Gateway) body(x *exchange) bool {
	if x.rt.APIKey == "" || !x.ctx.IsPost() && !x.ctx.IsPut() {
		return true
	}
	defer x.endSpan(g.startSpan(x, "gateway.body", trace.SpanKindInternal))
	return g.readBody(x) && g.translateRequest(x)
}

// respond answers: the gateway's own rate_throttle_status, a cacheable GET or HEAD from the cache or the core,
// and everything else with the core's answer.
func (g *Gateway) respond(x *exchange) bool {
	switch {
	case g.throttleStatusRequest(x) && !readMethod(x.ctx):
		g.methodNotAllowed(x, throttleRoute.Allow())
	case g.throttleStatusRequest(x):
		g.throttleStatus(x, ratelimit.Request{APIKey: x.rt.APIKey, User: x.cred.user, IP: x.clientIP()})
	case readMethod(x.ctx) && x.cacheable && g.cache != nil:
		g.read(x)
	default:
		g.forward(x)
	}
	return false
}
