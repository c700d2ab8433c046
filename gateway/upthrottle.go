package gateway

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/wire"
	"github.com/reqgate/reqgate/ratelimit"
)

// The upstream's own throttle (the mirrored service's, docs/api.md "Rate limits") blocks an account, and every
// call made while blocked starts the block again. So once the upstream answers an account's call with its
// throttle, the gateway sends none of that account's calls until the time the upstream gave has passed: it
// answers them itself, with the upstream's status, the interface's throttle body and the time left, and serves
// fresh cached reads (and stale ones, within cache.stale_if_error) meanwhile. A client's retries then never
// restart the upstream's block.

// maxUpstreamBlock bounds a block the upstream asks for: a longer one (a bug, a typo in a Retry-After) is
// held this long, and the next call asks again.
const maxUpstreamBlock = time.Hour

// maxUpstreamBlocks bounds the accounts remembered as blocked; when full, ended blocks go, and a new block that
// still finds no room is not remembered (its calls go on to the upstream, which refuses them itself).
const maxUpstreamBlocks = 100_000

// upstreamBlocks are the accounts the upstream throttled, until when, and with which status.
type upstreamBlocks struct {
	mu sync.Mutex
	m  map[string]upstreamBlock
}

type upstreamBlock struct {
	until  time.Time
	status int
}

// errUpstreamThrottled is a call not sent because the upstream throttled its account; left is the time the
// block has left.
type errUpstreamThrottled struct {
	status int
	left   time.Duration
}

func (e *errUpstreamThrottled) Error() string {
	return "the upstream throttled the account for " + e.left.String() + " more; nothing was sent"
}

// blocked is how long the upstream's block of apiKey has left at now (0: none), and its status.
func (b *upstreamBlocks) blocked(apiKey string, now time.Time) (time.Duration, int) {
	if apiKey == "" {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	blk, ok := b.m[apiKey]
	if !ok {
		return 0, 0
	}
	if left := blk.until.Sub(now); left > 0 {
		return left, blk.status
	}
	delete(b.m, apiKey)
	return 0, 0
}

// record notes that the upstream throttled apiKey for d from now, with status.
func (b *upstreamBlocks) record(apiKey string, status int, d time.Duration, now time.Time) {
	d = min(d, maxUpstreamBlock)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]upstreamBlock{}
	}
	if _, ok := b.m[apiKey]; !ok && len(b.m) >= maxUpstreamBlocks {
		for k, blk := range b.m {
			if !blk.until.After(now) {
				delete(b.m, k)
			}
		}
		if len(b.m) >= maxUpstreamBlocks {
			return
		}
	}
	if until := now.Add(d); until.After(b.m[apiKey].until) {
		b.m[apiKey] = upstreamBlock{until: until, status: status}
	}
}

// upstreamThrottle reports whether resp is the upstream's throttle and for how long: a 503 whose body is the
// interface's Request_Throttled error, or a 429 with that body, or (anyRetry429) any 429 with a Retry-After.
// The time is the body's try_again_after, else Retry-After (in seconds), else a second.
func upstreamThrottle(resp *fasthttp.Response, anyRetry429 bool) (time.Duration, bool) {
	status := resp.StatusCode()
	if status != fasthttp.StatusServiceUnavailable && status != fasthttp.StatusTooManyRequests {
		return 0, false
	}
	body := resp.Body()
	coded := bytes.Contains(body, []byte("Request_Throttled"))
	retry, hasRetry := seconds(resp.Header.Peek("Retry-After"))
	if !coded && (status != fasthttp.StatusTooManyRequests || !hasRetry || !anyRetry429) {
		return 0, false
	}
	if s, ok := tryAgainAfter(body); ok {
		return s, true
	}
	if hasRetry {
		return retry, true
	}
	return time.Second, true
}

// tryAgainAfter reads the try_again_after of a throttle body, XML (<try_again_after>N<) or JSON
// ("try_again_after":N).
func tryAgainAfter(body []byte) (time.Duration, bool) {
	for _, tag := range []string{"<try_again_after>", `"try_again_after":`} {
		if i := bytes.Index(body, []byte(tag)); i >= 0 {
			rest := bytes.TrimLeft(body[i+len(tag):], " ")
			n := 0
			for n < len(rest) && n < 10 && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			if d, ok := seconds(rest[:n]); ok {
				return d, true
			}
		}
	}
	return 0, false
}

// seconds reads a whole number of seconds, at least 1 (a Retry-After in delay-seconds).
func seconds(b []byte) (time.Duration, bool) {
	n, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(max(n, 1)) * time.Second, true
}

// upstreamBlocked returns the error of a call of x not sent because the upstream throttled its account, or nil.
func (g *Gateway) upstreamBlocked(x *exchange) error {
	if left, status := g.upBlocks.blocked(x.rt.APIKey, g.opt.Now()); left > 0 {
		return &errUpstreamThrottled{status: status, left: left}
	}
	return nil
}

// noteUpstreamThrottle records the upstream's throttle of x's account when resp is one.
func (g *Gateway) noteUpstreamThrottle(x *exchange, resp *fasthttp.Response) {
	if x.rt.APIKey == "" {
		return
	}
	// A 429 without the throttle body blocks the account only when the caller is proved: to a credential
	// check it may be the upstream's refusal of failed logins, which is the caller's, not the account's.
	if d, ok := upstreamThrottle(resp, x.verified); ok {
		g.upBlocks.record(x.rt.APIKey, resp.StatusCode(), d, g.opt.Now())
	}
}

// answerUpstreamThrottled answers a call the upstream's block kept back as the upstream answers a throttled
// call: its status, Retry-After and the throttle body with the time left.
func (g *Gateway) answerUpstreamThrottled(x *exchange, err error) bool {
	var t *errUpstreamThrottled
	if !errors.As(err, &t) {
		return false
	}
	ctx := x.ctx
	ctx.SetStatusCode(t.status)
	ctx.SetContentType(wire.ContentTypeXML)
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(ratelimit.RetryAfterSeconds(t.left)))
	ctx.SetBody(throttleXML(t.left))
	g.translateResponse(x)
	g.cacheHeaders(x, 0)
	return true
}
