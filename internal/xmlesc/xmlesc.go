// Package xmlesc escapes text for XML 1.0 documents by the one rule every XML writer of reqgate follows:
// the core's documents, the gateway's error bodies (which must read exactly like the core's), and XML
// translated from JSON. It is internal, not part of package translate, so that the core may import it without
// reaching into the gateway's packages.
//
// The rule, for character data and attribute values alike: & < > " and ' are always escaped, so a text
// reads the same wherever it is put; a carriage return is written as &#xD;, because an XML reader turns a
// literal one (or CR LF) into a line feed. In attribute values a tab and a line feed are written as &#x9;
// and &#xA; too, because attribute-value normalisation turns literal ones into spaces. Characters XML 1.0
// cannot carry in any form (most C0 controls, surrogates, U+FFFE, U+FFFF, invalid UTF-8) have no escape:
// Append writes U+FFFD in their place, so that a document always parses; AppendStrict refuses them, for a
// writer that must not change what it was given.
package xmlesc

import "unicode/utf8"

// Append appends s to dst escaped as character data (attr false) or as an attribute value (attr true). A
// character XML cannot carry becomes U+FFFD.
func Append[T ~string | ~[]byte](dst []byte, s T, attr bool) []byte {
	dst, _ = appendEscaped(dst, s, attr, false)
	return dst
}

// AppendStrict is Append for a writer that must not replace anything: it stops at the first character XML
// cannot carry and returns its offset in s, with dst holding the escaped text before it. bad is -1 when s
// was written whole.
func AppendStrict[T ~string | ~[]byte](dst []byte, s T, attr bool) (out []byte, bad int) {
	return appendEscaped(dst, s, attr, true)
}

// replacement is what Append writes for a character XML cannot carry.
const replacement = "\uFFFD"

// textEscapes is how each ASCII character is written in character data: "" for as it is, replacement for a
// C0 control XML cannot carry.
var textEscapes = func() (t [utf8.RuneSelf]string) {
	for c := range 0x20 {
		t[c] = replacement
	}
	t['\t'], t['\n'], t['\r'] = "", "", "&#xD;"
	t['&'], t['<'], t['>'], t['"'], t['\''] = "&amp;", "&lt;", "&gt;", "&quot;", "&apos;"
	return t
}()

// attrEscapes is textEscapes for attribute values, where a tab and a line feed are escaped too.
var attrEscapes = func() (t [utf8.RuneSelf]string) {
	t = textEscapes
	t['\t'], t['\n'] = "&#x9;", "&#xA;"
	return t
}()

// appendEscaped is Append (strict false) and AppendStrict (strict true).
func appendEscaped[T ~string | ~[]byte](dst []byte, s T, attr, strict bool) ([]byte, int) {
	ascii := &textEscapes
	if attr {
		ascii = &attrEscapes
	}
	last := 0
	for i := 0; i < len(s); {
		esc, size := "", 1
		if c := s[i]; c < utf8.RuneSelf {
			esc = ascii[c]
		} else {
			// The conversion copies at most utf8.UTFMax bytes, on the stack.
			var r rune
			r, size = utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if !ValidRune(r, size) {
				esc = replacement
			}
		}
		if esc == "" {
			i += size
			continue
		}
		if strict && esc == replacement {
			return append(dst, s[last:i]...), i
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		i += size
		last = i
	}
	return append(dst, s[last:]...), -1
}

// IsChar reports whether r is a character of XML 1.0 (its production Char).
func IsChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// ValidRune reports whether r, decoded from size bytes by utf8.DecodeRune or utf8.DecodeRuneInString, is a
// character XML 1.0 can carry: decoded from valid UTF-8, and IsChar.
func ValidRune(r rune, size int) bool {
	return (r != utf8.RuneError || size > 1) && IsChar(r)
}
