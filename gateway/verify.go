package gateway

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/internal/wire"
)

// verdict is what the core said of a credential, shared by the requests of one verification flight.
type verdict struct {
	proven  bool          // the core authenticated the credential for the account
	blocked time.Duration // too many failed logins: the core was not asked
	held    time.Duration // how long the attempt waited before the core was asked (stranger.go)
	answer  *cache.Entry  // otherwise the core's answer, relayed as it is (a 401, or a refusal given before authentication)
	err     error         // the exchange with the core failed
	took    time.Duration
	core    string // the core asked (coreOf)
}

// authenticate is the stage for a request whose credential the gateway does not trust yet. Before the core is
// asked, the caller is limited by IP only (an account's quota is never charged for a caller it has not
// proved), and a credential's attempt is reserved against the failed-login limits. The core is then asked
// about the credential alone, on the account's base URL and without the request's body, so that nothing of
// the request is read or forwarded before the caller is known. Only the core's explicit proof verifies the
// credential; any other answer is relayed to the caller. It returns true when the credential is verified.
func (g *Gateway) authenticate(x *exchange, auth []byte) bool {
	if g.throttleStatusRequest(x) && readMethod(x.ctx) {
		// While the upstream blocks the account, the verification would be a call that restarts the block:
		// the status says so instead, as it does for a caller its address's policies block.
		if left, _ := g.upBlocks.blocked(x.rt.APIKey, g.opt.Now()); left > 0 {
			g.writeThrottleStatus(x, left)
			return false
		}
	}
	if x.live.limiter != nil && !g.admitUnverified(x) {
		return false
	}
	base := x.rt.Base()
	key := base
	if x.cred.present {
		key += "\x00" + string(x.cred.digest[:])
	}
	v, _, _ := g.verifying.Do(key, func() (any, error) { return g.verify(x, base, auth), nil })
	vd := v.(*verdict)
	x.upstream += vd.took
	x.held += vd.held // the caller's wait, not a stall of the gateway (deadline.go)
	switch {
	case vd.proven:
		x.verified = true
		return true
	case vd.blocked > 0:
		secs := int((vd.blocked + time.Second - 1) / time.Second)
		g.respondError(x, g.opt.RejectStatus,
			"Too many failed authentication attempts. Try again after the time in Retry-After (in seconds).")
		x.addHeader("Retry-After", strconv.Itoa(max(secs, 1)))
	case vd.err != nil:
		x.core = vd.core
		g.upstreamFailed(x, vd.err)
		return false
	default:
		x.core = vd.core // the core's answer is relayed
		x.coreStatus = vd.answer.Status
		writeEntry(x.ctx, vd.answer)
		g.translateResponse(x)
	}
	g.cacheHeaders(x, 0)
	return false
}

// verify asks the core about x's credential with GET base, the Authorization header auth and nothing else of
// the caller's request.
func (g *Gateway) verify(x *exchange, base string, auth []byte) *verdict {
	ip, user := x.clientIP(), x.cred.user
	var held time.Duration
	if x.cred.present {
		// A request without a usable credential guesses nothing: it is not counted.
		r := g.fails.reserve(ip, x.rt.APIKey, user)
		if r.excess > 0 && r.wait == 0 {
			held, r.wait = g.holdStranger(ip, x.rt.APIKey, user, r)
		}
		if r.wait > 0 {
			authBlocked.Inc()
			return &verdict{blocked: r.wait, held: held}
		}
	}
	vd := g.ask(x, base, auth, ip, user)
	vd.held = held
	return vd
}

// ask is verify's question to the core, once the attempt is counted.
func (g *Gateway) ask(x *exchange, base string, auth []byte, ip, user string) *verdict {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	g.credentialRequest(req, g.verifyURI(base, x.rt.APIKey), auth)
	if !g.probing() {
		// A probe carries the credential alone: the upstream is not ours to tell who the caller is.
		g.forwardedHeaders(x, &req.Header)
	}
	took, err := g.roundTrip(x, req, resp)
	failed := err == nil && resp.StatusCode() == fasthttp.StatusUnauthorized
	if x.cred.present && !failed {
		g.fails.release(ip, x.rt.APIKey, user)
	}
	if err != nil {
		return &verdict{err: err, took: took, core: coreOf(resp)}
	}
	if x.cred.present && g.trusts(resp, x.rt.APIKey, auth) {
		authVerifications.Inc()
		g.creds.remember(x.cred)
		g.fails.succeeded(ip, x.rt.APIKey, user)
		return &verdict{proven: true, took: took}
	}
	if failed {
		authFailures.Inc()
	}
	if g.probing() && resp.StatusCode() >= 500 {
		if d, ok := upstreamThrottle(resp, false); ok {
			// The upstream's throttle, not a failure: its caller gets the throttle, with the time left.
			return &verdict{err: &errUpstreamThrottled{status: resp.StatusCode(), left: d}, took: took}
		}
		return &verdict{err: errProbeFailed, took: took}
	}
	e, _, _ := entryOf(resp)
	return &verdict{answer: e, took: took, core: coreOf(resp)}
}

// refreshAhead re-verifies, in the background, a remembered credential whose proof is more than half its TTL
// old, so that a busy credential never waits for its routine re-verification (a bcrypt check in the core) when
// the TTL runs out. Meanwhile the credential stays trusted only until its own expiry. The core's proof renews
// it; a 401 forgets it at once (its password changed since); anything else changes nothing, and the first
// request after the expiry verifies it as usual. The core is asked as verify asks it, with the credential
// alone; the caller's address is not sent (this is the gateway's own question), and nothing counts against the
// failed-login limits. One refresh per credential runs at a time, and one the core did not answer is not tried
// again for refreshRetry, so that a failing core is not asked at the request rate.
func (g *Gateway) refreshAhead(x *exchange) {
	cr := x.cred
	if _, busy := g.refreshing.LoadOrStore(cr.digest, struct{}{}); busy {
		return
	}
	auth := bytes.Clone(x.hdr.authorization)
	uri := g.verifyURI(x.rt.Base(), x.rt.APIKey)
	ip := strings.Clone(x.clientIP())
	go func() {
		if g.refresh(cr, uri, auth, ip) {
			g.refreshing.Delete(cr.digest)
			return
		}
		time.AfterFunc(refreshRetry, func() { g.refreshing.Delete(cr.digest) })
	}()
}

// refreshRetry is how long a credential's refresh that got no answer waits before it may be tried again.
const refreshRetry = time.Second

// refresh asks the core about cr (auth, on uri) and records its answer; it reports whether the core answered
// (a proof or a 401). A proof makes ip, the address of the request that used the credential, one its user
// logged in from (known.go).
func (g *Gateway) refresh(cr credential, uri string, auth []byte, ip string) bool {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	if left, _ := g.upBlocks.blocked(cr.apiKey, g.opt.Now()); left > 0 {
		return false // a call now would restart the upstream's block of the account
	}
	g.credentialRequest(req, uri, auth)
	g.upstreamCalls.Add(1)
	upstreamRequests.Inc()
	if err := g.up.do(req, resp); err != nil {
		return false
	}
	if d, ok := upstreamThrottle(resp, true); ok {
		g.upBlocks.record(cr.apiKey, resp.StatusCode(), d, g.opt.Now())
	}
	switch {
	case g.trusts(resp, cr.apiKey, auth):
		authVerifications.Inc()
		g.creds.renew(cr)
		g.fails.succeeded(ip, cr.apiKey, cr.user)
	case resp.StatusCode() == fasthttp.StatusUnauthorized:
		g.creds.forget(cr)
	default:
		return false
	}
	return true
}

// credentialRequest makes req the question a verification asks the core: GET uri with the Authorization header
// auth (when there is one) and nothing else of a caller's request.
func (g *Gateway) credentialRequest(req *fasthttp.Request, uri string, auth []byte) {
	req.SetRequestURI(uri)
	req.Header.SetHost(g.up.host)
	if len(auth) > 0 {
		req.Header.SetBytesV("Authorization", auth)
	}
}

// proves reports whether the core's answer carries its proof that it authenticated auth for apiKey.
func proves(resp *fasthttp.Response, apiKey string, auth []byte) bool {
	var want [wire.AuthProofLen]byte
	return bytes.Equal(resp.Header.Peek(wire.AuthProofHeader), wire.AppendAuthProof(want[:0], apiKey, auth))
}
