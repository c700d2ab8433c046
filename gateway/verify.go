package gateway

import (
	"github.com/valyala/fasthttp"
)

// verifyWithCore asks the core about a credential with the caller's own request, for a gateway-answered
// path (rate_throttle_status). The core authenticates every /api{N}/{key}/ request before routing it, so
// any answer but 401 proves the credential; a 401 is relayed. It returns true when verified.
func (g *Gateway) verifyWithCore(x *exchange) bool {
	ctx := x.ctx
	g.prepare(x, &ctx.Request)
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	g.upstreamCalls.Add(1)
	upstreamRequests.Inc()
	if err := g.up.do(&ctx.Request, resp); err != nil {
		status, msg := upstreamStatus(err)
		g.writeErr(x, status, msg)
		return false
	}
	if resp.StatusCode() == fasthttp.StatusUnauthorized || resp.StatusCode() >= 500 || !x.cred.present {
		x.coreStatus = resp.StatusCode()
		e, _, _ := entryOf(resp)
		writeEntry(ctx, e)
		g.translateResponse(x)
		return false
	}
	authVerifications.Inc()
	g.creds.remember(x.cred)
	x.verified = true
	return true
}
