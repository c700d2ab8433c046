package wire

import "net/netip"

// The origin the caller used. A response names it in Location (the address of a created record), so behind
// proxies it must be the caller's address, not the core's: each hop tells the next in two request headers,
//
//   - X-Forwarded-Proto, the scheme: http or https (a scheme is case-insensitive, RFC 3986 §3.1);
//   - X-Forwarded-Host, the host[:port] of the request target (ValidHost).
//
// The gateway sets both on every request it forwards, replacing what the caller sent. A reader believes them
// only from a peer in its trusted proxy networks, and then only the first value of each (the one the proxy
// nearest the caller wrote): the gateway from the proxies in front of it, the core from its gateways. A value
// these rules refuse is ignored, and the connection's own scheme and Host stand. Both sides read them with
// ForwardedProto and ForwardedHost, so a gateway never forwards a host that its core would read otherwise.
//
// X-Forwarded-For, the caller's address, is the gateway's alone: it appends each peer's address, and reads the
// caller behind trusted proxies from it for its per-address limits; the core does not read it.
const (
	HeaderForwardedProto = "X-Forwarded-Proto"
	HeaderForwardedHost  = "X-Forwarded-Host"
)

// MaxHostLen is the longest host[:port] accepted: a DNS name (at most 253 bytes) with a port, give or take.
const MaxHostLen = 255

// ValidHost reports whether h is host[:port] as RFC 3986 §3.2.2 writes the authority of an http(s) URI, in the
// forms a caller's Host can take: a DNS name or IPv4 address (letters, digits, '-', '.' and '_'), or an IPv6
// address in brackets, then optionally ':' and a port (at most 65535; an empty port means the default one),
// MaxHostLen bytes in all. It refuses the rest of what RFC 3986 allows in a host, which names nothing a DNS
// resolver or a browser sends (percent-encoding, the sub-delims "!$&'()*+,;=", "~", IPvFuture, zone ids),
// and everything that would change what a URL built from it means ('/', '?', '#', '@', '\\', spaces,
// controls, a comma that ends the first value of a header list). It allocates nothing for a name; an IPv6
// literal is copied to a string to be parsed.
func ValidHost[T string | []byte](h T) bool {
	if len(h) == 0 || len(h) > MaxHostLen {
		return false
	}
	var rest T
	if h[0] == '[' {
		end := -1
		for i := 1; i < len(h); i++ {
			if h[i] == ']' {
				end = i
				break
			}
		}
		if end < 0 || !ipv6Literal(h[1:end]) {
			return false
		}
		rest = h[end+1:]
	} else {
		i := 0
		for i < len(h) && h[i] != ':' {
			if !nameByte[h[i]] {
				return false
			}
			i++
		}
		if i == 0 {
			return false
		}
		rest = h[i:]
	}
	if len(rest) == 0 {
		return true
	}
	if rest[0] != ':' || len(rest) > 6 {
		return false
	}
	port := 0
	for i := 1; i < len(rest); i++ {
		c := rest[i]
		if c < '0' || c > '9' {
			return false
		}
		port = port*10 + int(c-'0')
	}
	return port <= 65535
}

// ipv6Literal reports whether s, the inside of an IP-literal, is an IPv6 address without a zone.
func ipv6Literal[T string | []byte](s T) bool {
	if len(s) < 2 || len(s) > len("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !hexByte[c] && c != ':' && c != '.' {
			return false
		}
	}
	a, err := netip.ParseAddr(string(s))
	return err == nil && a.Is6()
}

// nameByte holds the bytes of a DNS name or IPv4 address in a host; hexByte those of an IPv6 address's groups.
var nameByte, hexByte = func() (name, hex [256]bool) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") {
		name[c] = true
	}
	for _, c := range []byte("0123456789abcdefABCDEF") {
		hex[c] = true
	}
	return name, hex
}()

// FirstValue is the first element of a comma-separated header value, without the spaces and tabs around it.
func FirstValue[T string | []byte](v T) T {
	for i := 0; i < len(v); i++ {
		if v[i] == ',' {
			v = v[:i]
			break
		}
	}
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// ForwardedProto reads a trusted X-Forwarded-Proto header value v: "https" or "http" when its first value names
// one of them (in any case), "" otherwise.
func ForwardedProto[T string | []byte](v T) string {
	switch p := FirstValue(v); {
	case equalFold(p, "https"):
		return "https"
	case equalFold(p, "http"):
		return "http"
	}
	return ""
}

// ForwardedHost reads a trusted X-Forwarded-Host header value v: its first value when ValidHost accepts it,
// empty otherwise.
func ForwardedHost[T string | []byte](v T) T {
	if h := FirstValue(v); ValidHost(h) {
		return h
	}
	return v[:0]
}

// equalFold reports whether s is lower, an ASCII lower-case word, in any case.
func equalFold[T string | []byte](s T, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}
