// Package wire holds the rules of the interface that the core and the gateway must apply alike, so that
// neither side's copy can drift from the other's: the form of an api_key and of a strong entity tag, the proof
// of authentication the core gives a gateway (proof.go), the host and forwarded-origin headers (host.go), and
// the error document (errors.go).
package wire

// ValidAPIKey reports whether key has the form of an api_key (letters, digits, '-' and '_', 1 to 128 bytes).
// The core answers any other with 401 without looking for an account, so it can name no account.
func ValidAPIKey(key string) bool {
	if key == "" || len(key) > 128 {
		return false
	}
	for i := 0; i < len(key); i++ {
		b := key[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

// StrongETag reports whether t is a strong entity tag (RFC 9110 opaque-tag): a quoted string of visible
// characters other than the quote.
func StrongETag(t string) bool {
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return false
	}
	for i := 1; i < len(t)-1; i++ {
		if c := t[i]; c == '"' || c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}
