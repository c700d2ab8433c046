package gateway

// targetAuthority is the authority of an absolute-form request target ("http://host:port/path", RFC 9112
// §3.2.2), and false for the origin form ("/path") every other request uses. A server that receives the
// absolute form must take the host from it and ignore Host (RFC 9112 §3.2.2), as the core's net/http does: so
// the gateway checks it as it checks a Host (wire.ValidHost) and names it in a Location, and the same request
// gets the same Location whether it reaches the core through the gateway or not.
func targetAuthority(uri []byte) ([]byte, bool) {
	rest, ok := cutSchemePrefix(uri)
	if !ok {
		return nil, false
	}
	for i, c := range rest {
		if c == '/' || c == '?' || c == '#' {
			return rest[:i], true
		}
	}
	return rest, true
}

// cutSchemePrefix strips "http://" or "https://", in any case (a scheme is case-insensitive, RFC 3986 §3.1).
func cutSchemePrefix(uri []byte) ([]byte, bool) {
	for _, scheme := range []string{"http://", "https://"} {
		if len(uri) >= len(scheme) && equalFoldASCII(uri[:len(scheme)], scheme) {
			return uri[len(scheme):], true
		}
	}
	return nil, false
}
