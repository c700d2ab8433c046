package gateway

import (
	"bytes"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/wire"
)

// Trusted proxies: behind a TLS-terminating proxy the gateway sees plain HTTP from the proxy's address, so the
// scheme and host the caller used come from X-Forwarded-Proto and X-Forwarded-Host, and the caller's address
// from X-Forwarded-For. Those headers are believed only from the configured proxy networks; from anyone else
// they are replaced (Proto, Host) or only appended to (For), as before.

// fromTrustedProxy reports whether the connection comes from one of the trusted proxy networks.
func fromTrustedProxy(ctx *fasthttp.RequestCtx, proxies []netip.Prefix) bool {
	if len(proxies) == 0 {
		return false
	}
	a, ok := netip.AddrFromSlice(ctx.RemoteIP())
	if !ok {
		return false
	}
	return inNetworks(a.Unmap(), proxies)
}

// forwardedOrigin applies a trusted proxy's X-Forwarded-Proto and X-Forwarded-Host to x, by the rules the core
// reads them by (package wire): the first value of each (the proxy nearest the caller), when it is well formed;
// otherwise what the connection says stands.
func forwardedOrigin(x *exchange) {
	h := &x.ctx.Request.Header
	if p := wire.ForwardedProto(h.Peek(wire.HeaderForwardedProto)); p != "" {
		x.proto = p
	}
	if host := wire.ForwardedHost(h.Peek(wire.HeaderForwardedHost)); len(host) > 0 {
		x.host, x.hostRead = string(host), true
	}
}

// forwardedClient finds the caller in the X-Forwarded-For lines of a trusted proxy: walking from the right of
// the last line (the hop nearest the gateway) towards the left of the first, the first address that is not
// itself a trusted proxy. A proxy that adds a header line of its own instead of appending to the last one is
// read the same way. Entries further left were written by whoever sent them and are not believed. An entry
// may carry a port (192.0.2.1:5555, [2001:db8::1]:5555, as some proxies write it); empty entries are skipped
// (RFC 9110 §5.6.1). It returns "" when the lines hold no address (the request is the proxy's own), and false
// when the walk reaches an entry that is not an address: a trusted proxy must have written it, and the caller
// it names cannot be told, so the request is refused (origin) rather than counted under the proxy's address,
// which every caller behind it would then share.
func forwardedClient(lines [][]byte, proxies []netip.Prefix) (string, bool) {
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		xff := lines[i]
		for len(xff) > 0 {
			var v []byte
			if j := bytes.LastIndexByte(xff, ','); j >= 0 {
				v, xff = xff[j+1:], xff[:j]
			} else {
				v, xff = xff, nil
			}
			if v = bytes.TrimSpace(v); len(v) == 0 {
				continue
			}
			a, ok := hopAddr(v)
			if !ok {
				return "", false
			}
			last = a.String()
			if !inNetworks(a, proxies) {
				return last, true
			}
		}
	}
	return last, true
}

// hopAddr reads one X-Forwarded-For entry: an IP address, or one with a port.
func hopAddr(v []byte) (netip.Addr, bool) {
	a, err := netip.ParseAddr(string(v))
	if err != nil {
		ap, perr := netip.ParseAddrPort(string(v))
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

func inNetworks(a netip.Addr, networks []netip.Prefix) bool {
	for _, p := range networks {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// scheme is the scheme the caller used: the connection's, or a trusted proxy's X-Forwarded-Proto.
func (x *exchange) scheme() string {
	if x.proto == "" {
		return connScheme(x.ctx)
	}
	return x.proto
}

// peerIP is the address of the connection's peer: the caller, or the trusted proxy it came through.
func (x *exchange) peerIP() string {
	if x.proxies == nil {
		return x.clientIP()
	}
	return x.ctx.RemoteIP().String()
}
