package translate

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/reqgate/reqgate/internal/xmlesc"
)

// Character data and attribute values of XML input: checked against XML 1.0, references resolved, line
// ends normalised, decoded text kept in one buffer per document.

// decode checks character data or an attribute value and resolves entity and character references and
// line ends. It returns the input itself when nothing needs to change. space reports white space only.
func (p *xparser) decode(raw []byte, off int, attr bool) (val []byte, space bool, err error) {
	// simple: no reference, no carriage return, and in an attribute value no tab or line feed to normalise.
	space, simple := true, true
	for i := 0; i < len(raw); {
		c := raw[i]
		if c >= utf8.RuneSelf {
			size, err := p.checkRune(raw[i:], off+i)
			if err != nil {
				return nil, false, err
			}
			space = false
			i += size
			continue
		}
		switch {
		case c == '&' || c == '\r':
			simple, space = false, false
		case c == '\t' || c == '\n':
			if attr {
				simple = false
			}
		case c == ' ':
		case c < 0x20:
			return nil, false, p.errAt(off+i, "character "+runeName(rune(c))+" is not allowed in XML")
		default:
			space = false
		}
		i++
	}
	if simple {
		return raw, space, nil
	}
	return p.resolve(raw, off, attr)
}

// checkRune checks the non-ASCII character at the start of b, at offset off of the input, and returns its
// length.
func (p *xparser) checkRune(b []byte, off int) (int, error) {
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError && size <= 1 {
		return 0, p.errAt(off, "invalid UTF-8")
	}
	if !xmlesc.IsChar(r) {
		return 0, p.errAt(off, "character "+runeName(r)+" is not allowed in XML")
	}
	return size, nil
}

// resolve appends raw to p.dec with references resolved, line ends normalised and, in an attribute value,
// tabs and line feeds turned into spaces (attribute-value normalisation). A tab or line feed written as a
// character reference stays, as XML 1.0 says.
func (p *xparser) resolve(raw []byte, off int, attr bool) (val []byte, space bool, err error) {
	start := len(p.dec)
	out := p.dec
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '&':
			r, n, err := p.reference(raw[i:], off+i)
			if err != nil {
				return nil, false, err
			}
			out = utf8.AppendRune(out, r)
			i += n - 1
			continue
		case '\r':
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
			c = '\n'
		}
		if attr && (c == '\t' || c == '\n') {
			c = ' '
		}
		out = append(out, c)
	}
	p.dec = out
	// The full slice expression keeps later appends to p.dec from reaching this text.
	val = out[start:len(out):len(out)]
	return val, allSpace(val), nil
}

// reference resolves the entity or character reference at the start of b and returns its length.
func (p *xparser) reference(b []byte, off int) (rune, int, error) {
	end := bytes.IndexByte(b, ';')
	if end < 0 || end > 12 {
		return 0, 0, p.errAt(off, "& must start an entity reference (write &amp;)")
	}
	ref := b[1:end]
	switch string(ref) {
	case "lt":
		return '<', end + 1, nil
	case "gt":
		return '>', end + 1, nil
	case "amp":
		return '&', end + 1, nil
	case "quot":
		return '"', end + 1, nil
	case "apos":
		return '\'', end + 1, nil
	}
	if len(ref) < 2 || ref[0] != '#' {
		return 0, 0, p.errAt(off, "undefined entity &"+string(ref)+";")
	}
	digits, base := ref[1:], 10
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	n, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || len(digits) == 0 || digits[0] == '+' || !xmlesc.IsChar(rune(n)) {
		return 0, 0, p.errAt(off, "invalid character reference &"+string(ref)+";")
	}
	return rune(n), end + 1, nil
}

// checkCDATA checks the content of a CDATA section and normalises its line ends.
func (p *xparser) checkCDATA(raw []byte, off int) ([]byte, error) {
	cr := false
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' {
				if c != '\r' {
					return nil, p.errAt(off+i, "character "+runeName(rune(c))+" is not allowed in XML")
				}
				cr = true
			}
			i++
			continue
		}
		size, err := p.checkRune(raw[i:], off+i)
		if err != nil {
			return nil, err
		}
		i += size
	}
	if !cr {
		return raw, nil
	}
	start := len(p.dec)
	out := p.dec
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\r' {
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
			out = append(out, '\n')
			continue
		}
		out = append(out, raw[i])
	}
	p.dec = out
	return out[start:len(out):len(out)], nil
}

// declEncoding returns the encoding named in an XML declaration ("" when none).
func declEncoding(decl []byte) string {
	i := bytes.Index(decl, []byte("encoding"))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '=' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	end := bytes.IndexByte(rest[1:], rest[0])
	if end < 0 {
		return ""
	}
	return string(rest[1 : 1+end])
}

// eqFold compares ASCII strings case-insensitively.
func eqFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
