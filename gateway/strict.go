package gateway

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/wire"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// This file holds the HTTP/1.1 rules (RFC 9110, RFC 9112) that the gateway enforces on top of fasthttp's
// parser, read from the parsed request. The rules about the bytes of the request head, which parsing hides
// (line endings, obsolete line folding), are checked where the bytes are read: strictconn.go.
// docs/security.md lists both.

// strict answers a request that breaks one of the rules and returns false; the connection is then closed,
// since the gateway cannot tell where such a request, or its body, ends for the caller. It runs before
// routing, so that no rejected request reaches the cache or the core.
func (g *Gateway) strict(x *exchange) bool {
	status, msg := strictStatus(&x.ctx.Request.Header)
	if status == 0 {
		return true
	}
	g.respondError(x, status, msg)
	x.ctx.SetConnectionClose()
	return false
}

// msgNotImplemented refuses a method no path serves. It does not quote the method: the caller knows it, and a
// message echoing request bytes is one more place to get escaping wrong.
const msgNotImplemented = "No path of this service implements the method; the methods are GET, HEAD, POST, PUT, " +
	"DELETE and OPTIONS, in upper case (methods are case-sensitive)."

// strictStatus returns the status and message that refuse h, or 0 when h may be served.
func strictStatus(h *fasthttp.RequestHeader) (int, string) {
	// fasthttp accepts any HTTP/d.d and handles all but HTTP/1.1 like HTTP/1.0, so HTTP/1.2 would not get
	// the 1.1 semantics RFC 9110 §2.5 asks for and HTTP/2.0 would be served as if it were HTTP/1.0: only
	// the two versions the gateway implements are served, others get 505 (RFC 9110 §15.6.6).
	if p := h.Protocol(); string(p) != "HTTP/1.1" && string(p) != "HTTP/1.0" {
		return fasthttp.StatusHTTPVersionNotSupported, "The HTTP version " + string(p) + " is not supported; use HTTP/1.1."
	}
	// Methods are case-sensitive (RFC 9110 §9.1): "get" is not GET, and a core or cache that folded case
	// would serve it as a read while the gateway treats it as an unknown write. The gateway serves the
	// methods of the interface and the CORS preflight; PATCH and TRACE are standard methods no path serves,
	// so a known path refuses them with 405 and Allow, after authentication, like any other method it does
	// not serve (the core's answer). Anything else is a method no path serves, which RFC 9110 §15.6.2
	// answers with 501. (CONNECT asks for a tunnel, which a gateway in front of one service never opens.)
	switch string(h.Method()) {
	case fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPost, fasthttp.MethodPut,
		fasthttp.MethodDelete, fasthttp.MethodOptions, fasthttp.MethodPatch, fasthttp.MethodTrace:
	default:
		return fasthttp.StatusNotImplemented, msgNotImplemented
	}
	// A field name is a token (RFC 9110 §5.1), without spaces. fasthttp refuses a space before the colon
	// ("Content-Length : 5") but keeps a name with a space inside ("Foo Bar") as it is; a server behind
	// the gateway could read it differently (as "Foo", say), so such a request is refused whole.
	for k := range h.All() {
		if bytes.IndexByte(k, ' ') >= 0 {
			return fasthttp.StatusBadRequest, "A header field name contains a space."
		}
	}
	// A request with both Content-Length and Transfer-Encoding is how requests are smuggled: fasthttp
	// frames it by Transfer-Encoding, as RFC 9112 §6.3 says, but a server that trusts Content-Length sees
	// another request in the body. RFC 9112 §6.1 lets a server refuse it, and the connection must close
	// after it either way. fasthttp drops the header that lost, so the raw header is searched, and only
	// when the request has a body at all (-2: neither header).
	if h.ContentLength() != -2 && hasBothFramings(h.RawHeaders()) {
		return fasthttp.StatusBadRequest, "A request must not carry both Content-Length and Transfer-Encoding."
	}
	// The Host the caller used goes to the core as X-Forwarded-Host and comes back in Location. One that is
	// not a host[:port] by the rule the core reads X-Forwarded-Host by (wire.ValidHost) is refused, as RFC 9112
	// §3.2 asks of a Host with an invalid value, rather than forwarded for the core to ignore and the gateway
	// to write into a Location all the same ("Host: user@evil.test" would send the caller to evil.test).
	// fasthttp itself refuses an HTTP/1.1 request without a Host, or with two; HTTP/1.0 may have none.
	if host := h.Host(); len(host) > 0 && !wire.ValidHost(host) {
		return fasthttp.StatusBadRequest, "The Host header is not a host name or address with an optional port."
	}
	// An absolute-form target names the host in its place (RFC 9112 §3.2.2), and callerHost takes it from there:
	// it is held to the same rule.
	if auth, ok := route.Authority(h.RequestURI()); ok && !wire.ValidHost(auth) {
		return fasthttp.StatusBadRequest, "The host of the request target is not a host name or address with an optional port."
	}
	return 0, ""
}

// hasBothFramings reports whether the raw header lines raw name both Content-Length and Transfer-Encoding
// (in any case).
func hasBothFramings(raw []byte) bool {
	var cl, te bool
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		name, _, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		switch {
		case equalFoldASCII(name, "Content-Length"):
			cl = true
		case equalFoldASCII(name, "Transfer-Encoding"):
			te = true
		}
	}
	return cl && te
}

// equalFoldASCII reports whether b equals the ASCII string s, ignoring the case of letters.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if lowerASCII(b[i]) != lowerASCII(s[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
