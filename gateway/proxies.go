package gateway

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// Trusted proxies: behind a TLS-terminating proxy the gateway sees plain HTTP from the proxy's address, so the
// scheme and host the caller used come from X-Forwarded-Proto and X-Forwarded-Host, and the caller's address
// from X-Forwarded-For. Those headers are believed only from the configured proxy networks; from anyone else
// they are replaced (Proto, Host) or only appended to (For), as before.

// parseNetworks reads Options.TrustedProxies: CIDR networks or single IP addresses.
func parseNetworks(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("gateway: trusted proxy %q: %w", s, err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("gateway: trusted proxy %q: %w", s, err)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// fromTrustedProxy reports whether the connection comes from a configured proxy network.
func (g *Gateway) fromTrustedProxy(ctx *fasthttp.RequestCtx) bool {
	if len(g.proxies) == 0 {
		return false
	}
	a, ok := netip.AddrFromSlice(ctx.RemoteIP())
	if !ok {
		return false
	}
	return inNetworks(a.Unmap(), g.proxies)
}

// forwardedOrigin applies a trusted proxy's X-Forwarded-Proto and X-Forwarded-Host to x: the first value of
// each (the proxy nearest the caller), when it is well formed; otherwise what the connection says stands.
func forwardedOrigin(x *exchange) {
	h := &x.ctx.Request.Header
	if p := firstValue(h.Peek("X-Forwarded-Proto")); bytes.EqualFold(p, []byte("https")) {
		x.proto = "https"
	} else if bytes.EqualFold(p, []byte("http")) {
		x.proto = "http"
	}
	if host := firstValue(h.Peek("X-Forwarded-Host")); validHost(host) {
		x.host, x.hostRead = string(host), true
	}
}

// forwardedClient finds the caller in the X-Forwarded-For lines of a trusted proxy: walking from the right of
// the last line (the hop nearest the gateway) towards the left of the first, the first address that is not
// itself a trusted proxy. A proxy that adds a header line of its own instead of appending to the last one is
// read the same way. Entries further left were written by whoever sent them and are not believed. "" when
// the lines hold no usable address.
func forwardedClient(lines [][]byte, proxies []netip.Prefix) string {
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
			a, err := netip.ParseAddr(string(bytes.TrimSpace(v)))
			if err != nil {
				return last // a malformed hop: trust nothing beyond it
			}
			a = a.Unmap().WithZone("")
			last = a.String()
			if !inNetworks(a, proxies) {
				return last
			}
		}
	}
	return last
}

func inNetworks(a netip.Addr, networks []netip.Prefix) bool {
	for _, p := range networks {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// firstValue is the first entry of a comma-separated header value, trimmed.
func firstValue(v []byte) []byte {
	if i := bytes.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return bytes.TrimSpace(v)
}

// validHost accepts host[:port] as a Location may carry it: letters, digits, '.', '-', '_', ':' and the
// brackets of an IPv6 literal, at most 255 bytes.
func validHost(h []byte) bool {
	if len(h) == 0 || len(h) > 255 {
		return false
	}
	for _, c := range h {
		if !hostByte[c] {
			return false
		}
	}
	return true
}

// hostByte holds the bytes validHost accepts.
var hostByte = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte(".-_:[]", byte(c)) >= 0
	}
	return t
}()

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
