package translate

import "unicode/utf8"

// Name classes of XML 1.0 (fifth edition), used by both directions: XML input is checked against them, and
// JSON keys are checked before they become element names. The characters of text are xmlesc.IsChar.

// isNameStart reports whether r may start an XML name.
func isNameStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == ':'
	}
	switch {
	case r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF, r >= 0x370 && r <= 0x37D,
		r >= 0x37F && r <= 0x1FFF, r >= 0x200C && r <= 0x200D, r >= 0x2070 && r <= 0x218F,
		r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF,
		r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

// isNameChar reports whether r may continue an XML name.
func isNameChar(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == ':' ||
			r == '-' || r == '.'
	}
	return isNameStart(r) || r == 0xB7 || r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}

// nameLen returns the length of the XML name at the start of b (0 if b does not start with one).
func nameLen(b []byte) int {
	i := 0
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' ||
				i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.')
			if !ok {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || (i == 0 && !isNameStart(r)) || (i > 0 && !isNameChar(r)) {
			return i
		}
		i += size
	}
	return i
}

// isSpace reports whether c is XML white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// allSpace reports whether b holds XML white space only.
func allSpace(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}
