package gateway

import (
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
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

var bodyBudgetRefused = metrics.GetOrCreateCounter(`reqgate_gateway_body_budget_refused_total`)

// errBodyTooLarge is a body over Options.MaxBodyBytes.
var errBodyTooLarge = errors.New("request body too large")

// readBody reads the request body of a verified, admitted caller into memory, within the body budget. It
// returns false after answering 413 (over MaxBodyBytes), 503 (the budget is spent) or 400 (a broken body).
func (g *Gateway) readBody(x *exchange) bool {
	ctx := x.ctx
	if !x.announced {
		x.bodyRead = true
		return true
	}
	n := int64(ctx.Request.Header.ContentLength()) // over MaxBodyBytes was refused on arrival
	if n < 0 {
		n = int64(g.opt.MaxBodyBytes) // chunked: the size is known only once read
	}
	if !g.budget.take(n) {
		bodyBudgetRefused.Inc()
		g.respondError(x, fasthttp.StatusServiceUnavailable, "The gateway is busy receiving other requests; try again shortly.")
		x.addHeader("Retry-After", "1")
		return false
	}
	x.budget = n
	start := time.Now()
	body, err := readStream(ctx.RequestBodyStream(), ctx.Request.Header.ContentLength(), g.opt.MaxBodyBytes)
	x.uploading = time.Since(start)
	switch {
	case errors.Is(err, errBodyTooLarge):
		g.tooLarge(x)
		return false
	case err != nil:
		g.respondError(x, fasthttp.StatusBadRequest, "The request body could not be read.")
		return false
	}
	ctx.Request.SetBodyRaw(body)
	x.bodyRead = true
	return true
}

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
