package gateway

import (
	"time"

	"github.com/valyala/fasthttp"
)

// A request with `Expect: 100-continue` asks whether it may send its body. fasthttp answers 100 Continue
// before its handler runs, unless the server has an ExpectHandler; the gateway's (expect) runs the request's
// stages up to its body (the credential, the rate policies, the body's place in the budget and its shares),
// so that only a caller the gateway will read a body from is told to send it. Every other caller gets its
// final answer (401, 429, 503, ...) with no 100 before it, and the connection is closed, since the caller may
// have begun its body anyway. A request whose body the gateway does not read is answered there too.
//
// A request that passed pauses in the body stage: its exchange is kept on the request (a user value) while
// the server sends 100 Continue and reads ahead of the body, and the handler runs it on from there. When the
// request ends before the handler (the body could not be read), the server resets the request, which closes
// the user value: the exchange then gives its reservation back.

// pausedKey is the user value of a request paused before its body.
type pausedKey struct{}

// pausedExchange is an exchange paused before its body.
type pausedExchange struct {
	g *Gateway
	x *exchange
}

// Close gives back an exchange the handler never resumed.
func (p *pausedExchange) Close() error {
	if x := p.x; x != nil {
		p.x = nil
		p.g.releaseBody(x)
		if x.span != nil {
			x.span.End()
		}
		x.state = state{}
		exchanges.Put(x)
	}
	return nil
}

// expect is the server's ExpectHandler: 100 (send the body) for a request that paused before its body, else
// the status of the answer it got. The server writes that answer as the stages left it and closes the
// connection.
func (g *Gateway) expect(ctx *fasthttp.RequestCtx) int {
	// Not g.start: the server reads the clock for the request only after this handler.
	x := g.begin(ctx, connOf(ctx.Conn()), g.opt.Now())
	x.expecting, x.expectAt = true, time.Now()
	g.run(x)
	if !x.paused {
		return ctx.Response.StatusCode() // x is finished and back in the pool
	}
	x.expecting, x.paused = false, false
	ctx.SetUserValue(pausedKey{}, &pausedExchange{g: g, x: x})
	return fasthttp.StatusContinue
}

// awaitBody pauses x before its body: the body is asked for now, and must arrive within the read timeout
// (counted from now) and, with a minimum upload rate, its first bytes within the grace (the server reads ahead
// of the handler), as pacedBody would require. The exchange's end takes the deadline off (conn.endExchange).
func (g *Gateway) awaitBody(x *exchange) {
	x.paused = true
	x.bodyFrom = time.Now()
	c := x.ctx.Conn()
	if c == nil {
		return
	}
	var last time.Time
	if g.opt.ReadTimeout > 0 {
		last = x.bodyFrom.Add(g.opt.ReadTimeout)
	}
	if d, _ := uploadDeadline(x.bodyFrom, g.opt.UploadGrace, g.opt.MinUploadRate, 0, last); !d.IsZero() {
		_ = c.SetReadDeadline(d)
	}
}
