package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/wire/route"
)

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
	case x.live.corsOrigins[o]:
		x.addHeader("Access-Control-Allow-Origin", o)
		x.addHeader("Access-Control-Allow-Credentials", "true")
	case x.live.corsOrigins["*"]:
		// Any origin, but never with the browser's own credentials: a page that sends Authorization itself
		// still works (Access-Control-Allow-Headers below), and no site rides on a logged-in browser.
		x.addHeader("Access-Control-Allow-Origin", "*")
	default:
		return false
	}
	x.addHeader("Access-Control-Expose-Headers", "X-Request-Id, X-Cache, Age, Location, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed, ETag")
	if ctx.IsOptions() && len(ctx.Request.Header.Peek("Access-Control-Request-Method")) > 0 {
		x.addHeader("Access-Control-Allow-Methods", corsMethods(&x.rt))
		x.addHeader("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, X-Request-Id, Cache-Control, Idempotency-Key, If-Match, If-None-Match, If-Unmodified-Since")
		x.addHeader("Access-Control-Max-Age", "600")
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return true
	}
	return false
}

// corsMethods are the methods a preflight allows on rt: those the route table gives its route (a record: GET,
// PUT, DELETE; a collection: POST), so that a page learns before sending a write that the path takes none, as
// the core would answer 405; GET alone where the path names no route of its version (the gateway's own
// endpoints, or nothing: any method there gets 404).
func corsMethods(rt *route.Route) string {
	if spec, ok := rt.Class.Spec(); ok && rt.Version >= spec.MinVersion {
		return spec.Allow()
	}
	return "GET"
}
