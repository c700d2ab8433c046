package gateway

import (
	"errors"
	"time"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/internal/wire"
)

// prepare turns the caller's request into the upstream request, in place: hop-by-hop headers go, the
// X-Forwarded-* headers and the request id are set, the target becomes the normalised one of route.Parse
// under the upstream's prefix (the same form that was routed and keyed), and a body the gateway did not read
// is not sent.
func (g *Gateway) prepare(x *exchange, req *fasthttp.Request) {
	stripHop(&req.Header)
	req.Header.Del("Accept-Encoding") // bodies are cached and rewritten as they are: no compressed variants
	// A body sent without a Content-Type goes on without one (fasthttp would add application/octet-stream,
	// which the core refuses): clients of the mirrored service send XML that way and the core reads it as XML.
	req.Header.SetNoDefaultContentType(true)
	if !x.bodyRead {
		req.ResetBody()
		req.Header.SetContentLength(0)
	}
	g.forwardedHeaders(x, &req.Header)
	coreIfMatch(&req.Header)
	req.SetRequestURI(g.up.prefix + x.rt.URI())
	req.Header.SetHost(g.up.host)
}

// forwardedHeaders sets the X-Forwarded-* headers and the request id of an upstream request.
func (g *Gateway) forwardedHeaders(x *exchange, h *fasthttp.RequestHeader) {
	// The peer's own address is appended (a trusted proxy's too), as each hop does, to every address the
	// caller's X-Forwarded-For lines carried, in their order.
	remote := x.peerIP()
	xff := remote
	if prior := x.ctx.Request.Header.PeekAll("X-Forwarded-For"); len(prior) > 0 {
		var b []byte
		for _, v := range prior {
			b = append(append(b, v...), ", "...)
		}
		xff = string(b) + remote
	}
	h.Del("X-Forwarded-For")
	h.Set("X-Forwarded-For", xff)
	// The origin the caller used, for the core's Location (wire.HeaderForwardedHost): the Host strict let
	// through, or a trusted proxy's X-Forwarded-Host, both hosts by wire.ValidHost.
	h.Set(wire.HeaderForwardedProto, x.scheme())
	if host := x.callerHost(); host != "" {
		h.Set(wire.HeaderForwardedHost, host)
	} else {
		h.Del(wire.HeaderForwardedHost)
	}
	h.Set(headerRequestID, x.reqID)
}

// forward sends the request upstream and relays the answer: everything but cacheable GETs and HEADs (writes,
// unknown paths), and cacheable reads when the cache is off.
func (g *Gateway) forward(x *exchange) {
	ctx := x.ctx
	// The writes: the core answers every other method without changing anything (405 for PATCH and TRACE).
	write := ctx.IsPost() || ctx.IsPut() || ctx.IsDelete()
	if x.cacheable && (ctx.IsGet() || ctx.IsHead()) {
		x.cacheRes = cacheBypass
	}
	// The slot first: expired then sees the wait for it, and the caller gone meanwhile.
	slot, err := g.enter(x)
	if err != nil {
		g.upstreamFailed(x, err)
		return
	}
	defer g.leave(&slot)
	if g.expired(x) {
		g.cacheHeaders(x, 0)
		return
	}
	g.prepare(x, &ctx.Request)
	took, err := g.roundTripAsGet(x, &ctx.Request, &ctx.Response)
	g.leave(&slot)
	x.upstream = took
	x.core = coreOf(&ctx.Response)
	if err != nil {
		g.upstreamFailed(x, err)
		if write && !neverSent(err) {
			// The write may have reached the core: its effect is unknown, so reads must not trust the cache. A
			// write that never left the gateway changed nothing, and the stale stand-ins of stale_if_error stay.
			g.log.Warn("write outcome unknown; its reads are invalidated", "request_id", x.reqID,
				"method", string(ctx.Method()), "path", x.rt.Path, "err", err)
			g.invalidate(writeOf(&x.rt))
		}
		return
	}
	g.coreAnswered(x, ctx.Response.StatusCode())
	resp := &ctx.Response
	stripHop(&resp.Header)
	resp.Header.Del("Date")
	resp.Header.Del(wire.AuthProofHeader)
	rewriteLocation(&resp.Header, g.up.origins, x.scheme()+"://"+x.callerHost())
	if write && (x.coreStatus < 300 && x.coreStatus >= 200 || x.coreStatus >= 500) {
		g.invalidate(writeOf(&x.rt))
	}
	g.translateResponse(x)
	g.cacheHeaders(x, 0)
}

// roundTrip sends req to the core for x and reads its answer into resp: the one exchange with the core of every
// path (a read's fetch, a forward, a verification), counted and traced in one place.
func (g *Gateway) roundTrip(x *exchange, req *fasthttp.Request, resp *fasthttp.Response) (time.Duration, error) {
	if err := g.upstreamBlocked(x); err != nil {
		return 0, err
	}
	span := g.startSpan(x, "gateway.upstream", trace.SpanKindClient)
	x.traceUpstream(req)
	start := time.Now()
	g.upstreamCalls.Add(1)
	upstreamRequests.Inc()
	err := g.up.do(req, resp)
	took := time.Since(start)
	x.endUpstreamSpan(span, resp, err)
	if err == nil {
		g.noteUpstreamThrottle(x, resp)
	}
	return took, err
}

// roundTripAsGet is roundTrip, but a HEAD goes upstream as a GET: its answer then has the body a GET gets, so
// that the caller gets exactly GET's headers (Content-Length, ETag, the JSON form's Content-Type) and the
// entry is the one a GET stores. The server drops the body of an answer to HEAD (it sees the method restored
// here), after taking its length for Content-Length.
func (g *Gateway) roundTripAsGet(x *exchange, req *fasthttp.Request, resp *fasthttp.Response) (time.Duration, error) {
	if !req.Header.IsHead() {
		return g.roundTrip(x, req, resp)
	}
	req.Header.SetMethodBytes(methodGet)
	defer req.Header.SetMethodBytes(methodHead)
	return g.roundTrip(x, req, resp)
}

var (
	methodGet  = []byte(fasthttp.MethodGet)
	methodHead = []byte(fasthttp.MethodHead)
)

// upstreamFailed answers a request whose exchange with the core failed: 504 for a timeout, 503 when no
// connection came free or its account had no slot, 502 otherwise (upstreamStatus), in the caller's
// representation. A 502 or 503 carries Retry-After: the core is unreachable, failing or busy for now, and a
// client that waits a second and tries again (a write it knows was not applied, or one with its
// Idempotency-Key) should find it back or another core in its place.
func (g *Gateway) upstreamFailed(x *exchange, err error) {
	if g.answerUpstreamThrottled(x, err) {
		return
	}
	status, msg := upstreamStatus(err)
	if status == fasthttp.StatusBadGateway || status == fasthttp.StatusServiceUnavailable {
		x.addHeader("Retry-After", "1")
	}
	if errors.Is(err, errAccountBusy) {
		// Counted (reqgate_gateway_not_forwarded_total): a tenant at its cap must not flood the log.
		g.log.Debug("request not forwarded: its account is at upstream.max_inflight_per_account",
			"request_id", x.logID(), "route", string(x.rt.Class))
	} else {
		g.log.Warn("upstream request failed", "request_id", x.logID(), "route", string(x.rt.Class), "err", err)
	}
	g.respondError(x, status, msg)
	g.cacheHeaders(x, 0)
}

// invalidate makes the cached reads that w can change invisible, here at once and on the other replicas
// through the bus, before the write's response is returned.
func (g *Gateway) invalidate(w cache.Write) {
	if w.Account == "" {
		return
	}
	if g.cache != nil {
		g.cache.InvalidateWrite(w)
	}
	g.bus.Publish(w)
}
