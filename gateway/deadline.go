package gateway

import (
	"net"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/budget"
)

// A request the gateway forwards late can do harm: a write whose caller gave up (and wrote again, elsewhere)
// lands over the newer value. So the gateway never starts forwarding a request whose caller has closed its
// connection, or that has waited in the gateway longer than QueueTimeout (a stall: the process paused, starved
// of CPU, or waiting on a slow credential check); it answers 503, and nothing reaches the core. And every
// request it does forward tells the core, in budget.Header, how long the gateway will wait for the answer, so
// that the core refuses the work once no one waits for it (core/api).

// expired answers, instead of forwarding it, a request whose caller has gone or that has waited too long, and
// reports whether it did.
//
// The wait is counted from when the server had read the request's headers, less the time the caller took to
// send its body and the time a rate policy held the request for its slot: those are the caller's and the
// operator's, not a stall of the gateway. A request that arrived while the process was stopped is read only
// when it resumes, so its wait starts then; its caller, if it gave up meanwhile, has closed the connection,
// which the second check sees.
func (g *Gateway) expired(x *exchange) bool {
	if q := g.opt.QueueTimeout; q > 0 {
		if t := x.readAt(); !t.IsZero() && time.Since(t)-x.uploading-x.held > q {
			expiredQueue.Inc()
			g.log.Warn("request not forwarded: it waited longer than upstream.queue_timeout", "request_id", x.logID(),
				"route", string(x.rt.Class), "waited", time.Since(t).String())
			g.respondError(x, fasthttp.StatusServiceUnavailable,
				"The request waited too long in the gateway and was not sent on; nothing was changed. Try again.")
			x.addHeader("Retry-After", "1")
			return true
		}
	}
	if peerClosed(x.ctx.Conn()) {
		expiredGone.Inc()
		g.log.Info("request not forwarded: the caller closed its connection", "request_id", x.logID(),
			"route", string(x.rt.Class))
		g.respondError(x, fasthttp.StatusServiceUnavailable,
			"The caller closed its connection before the request was sent on; nothing was changed.")
		x.ctx.SetConnectionClose()
		return true
	}
	return false
}

// setBudget tells the core, in budget.Header, how long it has for req when the gateway waits wait for the
// answer: a tenth less (a second less at most), so that the core's refusal at its deadline reaches the gateway
// before the gateway gives up. A 504 of the gateway leaves the caller not knowing whether a write was applied;
// the core's 503 says it was not. Whatever the caller sent under that name is replaced, every line of it.
func setBudget(req *fasthttp.Request, wait time.Duration) {
	var buf [16]byte
	req.Header.DelBytes(headerBudget)
	req.Header.SetCanonical(headerBudget, budget.Append(buf[:0], wait-min(wait/10, time.Second)))
}

var headerBudget = []byte(budget.Header)

// controlSocket runs f on the socket under the connection wrappers of the gateway (conns.go, strictconn.go,
// deadlines.go) and TLS, without waiting for it or taking a byte from it; false when there is no socket (an
// in-memory connection, a server of the caller's own with other wrappers).
func controlSocket(c net.Conn, f func(fd uintptr)) bool {
	for range 8 {
		switch v := c.(type) {
		case syscall.Conn:
			rc, err := v.SyscallConn()
			return err == nil && rc.Control(f) == nil
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return false
		}
	}
	return false
}
