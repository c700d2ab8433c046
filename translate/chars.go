package translate

import (
	"unicode"
	"unicode/utf8"
)

// Name classes of XML 1.0 (fifth edition), used by both directions: XML input is checked against them, and
// JSON keys are checked before they become element names. The characters of text are xmlesc.IsChar.
//
// ASCII, which almost every name is made of, is looked up in asciiName; the rest in the range tables of the
// productions NameStartChar and NameChar.

// Bits of asciiName.
const (
	nameStart uint8 = 1 << iota // may start a name
	nameChar                    // may continue a name
)

// asciiName holds the name classes of each ASCII character.
var asciiName = func() (t [utf8.RuneSelf]uint8) {
	const start = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_:"
	for _, c := range start {
		t[c] |= nameStart
	}
	for _, c := range start + "0123456789-." {
		t[c] |= nameChar
	}
	return t
}()

// nameStartRanges is NameStartChar beyond ASCII.
var nameStartRanges = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0xC0, Hi: 0xD6, Stride: 1}, {Lo: 0xD8, Hi: 0xF6, Stride: 1}, {Lo: 0xF8, Hi: 0x2FF, Stride: 1},
		{Lo: 0x370, Hi: 0x37D, Stride: 1}, {Lo: 0x37F, Hi: 0x1FFF, Stride: 1}, {Lo: 0x200C, Hi: 0x200D, Stride: 1},
		{Lo: 0x2070, Hi: 0x218F, Stride: 1}, {Lo: 0x2C00, Hi: 0x2FEF, Stride: 1}, {Lo: 0x3001, Hi: 0xD7FF, Stride: 1},
		{Lo: 0xF900, Hi: 0xFDCF, Stride: 1}, {Lo: 0xFDF0, Hi: 0xFFFD, Stride: 1},
	},
	R32:         []unicode.Range32{{Lo: 0x10000, Hi: 0xEFFFF, Stride: 1}},
	LatinOffset: 2,
}

// nameCharRanges is NameChar beyond ASCII: NameStartChar with #xB7, [#x300-#x36F] and [#x203F-#x2040]
// merged in.
var nameCharRanges = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0xB7, Hi: 0xB7, Stride: 1}, {Lo: 0xC0, Hi: 0xD6, Stride: 1}, {Lo: 0xD8, Hi: 0xF6, Stride: 1},
		{Lo: 0xF8, Hi: 0x37D, Stride: 1}, {Lo: 0x37F, Hi: 0x1FFF, Stride: 1}, {Lo: 0x200C, Hi: 0x200D, Stride: 1},
		{Lo: 0x203F, Hi: 0x2040, Stride: 1}, {Lo: 0x2070, Hi: 0x218F, Stride: 1}, {Lo: 0x2C00, Hi: 0x2FEF, Stride: 1},
		{Lo: 0x3001, Hi: 0xD7FF, Stride: 1}, {Lo: 0xF900, Hi: 0xFDCF, Stride: 1}, {Lo: 0xFDF0, Hi: 0xFFFD, Stride: 1},
	},
	R32:         []unicode.Range32{{Lo: 0x10000, Hi: 0xEFFFF, Stride: 1}},
	LatinOffset: 3,
}

// nameLen returns the length of the XML name at the start of b (0 if b does not start with one).
func nameLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	i := 0
	if c := b[0]; c < utf8.RuneSelf {
		if asciiName[c]&nameStart == 0 {
			return 0
		}
		i = 1
	} else if i = nonASCIINameLen(b, nameStartRanges); i == 0 {
		return 0
	}
	for i < len(b) {
		if c := b[i]; c < utf8.RuneSelf {
			if asciiName[c]&nameChar == 0 {
				return i
			}
			i++
			continue
		}
		n := nonASCIINameLen(b[i:], nameCharRanges)
		if n == 0 {
			return i
		}
		i += n
	}
	return i
}

// nonASCIINameLen returns the length of the non-ASCII character at the start of b when it is in ranges, 0
// when it is not. U+FFFD is a name character, but it is also what invalid UTF-8 decodes to: it is refused.
func nonASCIINameLen(b []byte, ranges *unicode.RangeTable) int {
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError || !unicode.Is(ranges, r) {
		return 0
	}
	return size
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
