package gateway

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Request bodies are streamed (fasthttp's StreamRequestBody): the server reads a request's headers, and the
// handler reads its body only once the caller is verified, the rate policies admitted it, and the bytes fit in
// the gateway's budget of bodies in flight. So what a caller announces in Content-Length costs nothing until
// then, and the memory held by bodies is bounded whatever callers announce.

// bodyBudget bounds the bytes of request bodies held at once across all requests.
type bodyBudget struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes, or returns false when they do not fit.
func (b *bodyBudget) take(n int64) bool {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *bodyBudget) give(n int64) { b.used.Add(-n) }

// errBodyTooLarge is a body over Options.MaxBodyBytes.
var errBodyTooLarge = errors.New("request body too large")

// readBody reads the request body of a verified, admitted caller into memory, within the body budget and its
// account's and address's shares of it (bodyshare.go). It returns false after answering 413 (over
// MaxBodyBytes), 503 (the budget or a share is spent), 408 (the body arrives slower than MinUploadRate) or 400
// (a broken body), and also when the caller awaits 100 Continue (expect.go): the body is read once it is sent.
func (g *Gateway) readBody(x *exchange) bool {
	ctx := x.ctx
	if !x.announced {
		x.bodyRead = true
		return true
	}
	if x.budget == 0 && !g.reserveBody(x) {
		return false
	}
	if x.expecting {
		g.awaitBody(x)
		return false
	}
	from := x.bodyFrom
	if from.IsZero() {
		from = time.Now()
	}
	r := ctx.RequestBodyStream()
	var paced *pacedBody
	if (g.opt.MinUploadRate > 0 || g.opt.ReadTimeout > 0) && r != nil && ctx.Conn() != nil {
		paced = g.pace(x, r, from)
		r = paced
	}
	body, err := readStream(r, ctx.Request.Header.ContentLength(), g.opt.MaxBodyBytes)
	x.uploading = time.Since(from)
	switch {
	case errors.Is(err, errBodyTooLarge):
		g.tooLarge(x)
		return false
	case err != nil && paced != nil && paced.late():
		x.tooSlow = true
		if !paced.byRate {
			g.respondError(x, fasthttp.StatusRequestTimeout, "The request was not received in time.")
			return false
		}
		bodyTooSlow.Inc()
		g.respondError(x, fasthttp.StatusRequestTimeout, fmt.Sprintf(
			"The request body arrived too slowly; after %s it must arrive at %d bytes per second or more.",
			g.opt.UploadGrace, g.opt.MinUploadRate))
		return false
	case err != nil:
		g.respondError(x, fasthttp.StatusBadRequest, "The request body could not be read.")
		return false
	}
	ctx.Request.SetBodyRaw(body)
	x.bodyRead = true
	return true
}

// reserveBody takes what x's body announces (the largest body when chunked) from its account's and address's
// shares and from the budget. It returns false after answering 503 with Retry-After.
func (g *Gateway) reserveBody(x *exchange) bool {
	n := int64(x.ctx.Request.Header.ContentLength()) // over MaxBodyBytes was refused on arrival
	if n < 0 {
		n = int64(g.opt.MaxBodyBytes) // chunked: the size is known only once read
	}
	addr, _ := netip.ParseAddr(x.clientIP())
	switch g.shares.take(x.rt.APIKey, addr, n) {
	case shareAccount:
		g.busy(x, "Too many request bodies of this account are in flight; try again shortly.")
		return false
	case shareAddress:
		g.busy(x, "Too many request bodies from this address are in flight; try again shortly.")
		return false
	}
	if !g.budget.take(n) {
		g.shares.give(x.rt.APIKey, addr, n)
		bodyBudgetRefused.Inc()
		g.busy(x, "The gateway is busy receiving other requests; try again shortly.")
		return false
	}
	x.budget, x.shareAccount, x.shareAddr = n, x.rt.APIKey, addr
	return true
}

// busy answers 503 with Retry-After for a body the gateway will not take now.
func (g *Gateway) busy(x *exchange, msg string) {
	g.respondError(x, fasthttp.StatusServiceUnavailable, msg)
	x.addHeader("Retry-After", "1")
}

// releaseBody gives back what reserveBody took, at the end of the request.
func (g *Gateway) releaseBody(x *exchange) {
	if x.budget > 0 {
		g.budget.give(x.budget)
		g.shares.give(x.shareAccount, x.shareAddr, x.budget)
		x.budget = 0
	}
}

// pacedBody is a body stream read within the request's read timeout and, with Options.MinUploadRate, no slower
// than that rate: before each read the connection's read deadline moves to from + UploadGrace + (bytes so
// far)/MinUploadRate, as Apache's mod_reqtimeout does with MinRate, but never past the read timeout. A caller
// that keeps up gets a later deadline with every read; a trickle reaches its deadline soon after the grace and
// is dropped, with what it held of the budget. The server sets no read deadline of its own (conns.go): the one
// set here is taken off when the exchange ends (conn.endExchange).
type pacedBody struct {
	r        io.Reader
	conn     net.Conn
	from     time.Time
	grace    time.Duration
	rate     int64     // bytes per second; 0: none
	last     time.Time // the request's read deadline (zero: none)
	n        int64     // bytes read so far
	deadline time.Time // the read deadline in force
	byRate   bool      // the deadline in force is the rate's, not the read timeout's
}

// pace wraps x's body stream r, whose reading began at from.
func (g *Gateway) pace(x *exchange, r io.Reader, from time.Time) *pacedBody {
	p := &pacedBody{r: r, conn: x.ctx.Conn(), from: from, grace: g.opt.UploadGrace, rate: g.opt.MinUploadRate}
	if g.opt.ReadTimeout > 0 {
		began := x.readAt()
		if began.IsZero() {
			began = from
		}
		p.last = began.Add(g.opt.ReadTimeout)
	}
	return p
}

func (p *pacedBody) Read(b []byte) (int, error) {
	d, byRate := uploadDeadline(p.from, p.grace, p.rate, p.n, p.last)
	if !d.Equal(p.deadline) {
		if err := p.conn.SetReadDeadline(d); err != nil {
			return 0, err
		}
		p.deadline, p.byRate = d, byRate
	}
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}

// uploadDeadline is when a body whose reading began at from must have delivered n bytes: from + grace +
// n/rate with a minimum upload rate (rate > 0), but never past last, the read timeout's deadline (zero: none);
// zero when neither holds. byRate reports that the rate's deadline is the earlier.
func uploadDeadline(from time.Time, grace time.Duration, rate, n int64, last time.Time) (d time.Time, byRate bool) {
	if rate <= 0 {
		return last, false
	}
	d = from.Add(grace + time.Duration(n*int64(time.Second)/rate))
	if !last.IsZero() && last.Before(d) {
		return last, false
	}
	return d, true
}

// late reports whether the deadline in force has passed: a read that failed then failed for want of time
// (whether or not the body stream passes the timeout on as such).
func (p *pacedBody) late() bool { return !p.deadline.IsZero() && !time.Now().Before(p.deadline) }

// readStream reads a body of length n (-1: chunked, up to limit).
func readStream(r io.Reader, n, limit int) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	if n >= 0 {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, errBodyTooLarge
	}
	return b, nil
}

// A small body the gateway did not read is read and dropped before the connection closes, within drainTimeout:
// closing a socket with unread bytes resets it, and the reset can destroy the answer (a 413, a 401) before the
// caller, still sending its body, has read it. A larger body, or one of unknown length, is not waited for.
const (
	drainMax     = 256 << 10
	drainTimeout = time.Second
)

func drainBody(ctx *fasthttp.RequestCtx) {
	n := ctx.Request.Header.ContentLength()
	r := ctx.RequestBodyStream()
	if n <= 0 || n > drainMax || r == nil {
		return
	}
	if c := ctx.Conn(); c != nil {
		_ = c.SetReadDeadline(time.Now().Add(drainTimeout)) // the connection closes after this answer
	}
	_, _ = io.CopyN(io.Discard, r, int64(n))
}

// tooLarge answers 413 for a body over the limit; the body is left unread and the connection closed.
func (g *Gateway) tooLarge(x *exchange) {
	g.respondError(x, fasthttp.StatusRequestEntityTooLarge, bodyTooLargeMessage(g.opt.MaxBodyBytes))
}
