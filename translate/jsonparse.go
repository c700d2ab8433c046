package translate

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads JSON (RFC 8259) into a small tree that keeps the order of object members, which
// encoding/json's map form loses, and reports errors with line and column.

// jkind is the kind of a JSON value.
type jkind uint8

const (
	jString jkind = iota
	jNumber
	jTrue
	jFalse
	jNull
	jObject
	jArray
)

// span locates text: in the input, or in the buffer of decoded strings (strings with escapes). The tree
// holds no pointers, so building it costs the garbage collector nothing.
type span struct {
	off, end int32
	dec      bool
}

// jvalue is one JSON value. For a string, s is the decoded text; for a number, the literal as written. For
// an object, members[start:start+n]; for an array, items[start:start+n].
type jvalue struct {
	kind  jkind
	s     span
	start int32
	n     int32
}

// jmember is one member of an object.
type jmember struct {
	key span
	val int32
}

// jdoc is a parsed JSON text; vals[root] is the top value.
type jdoc struct {
	in      []byte
	dec     []byte // decoded strings
	vals    []jvalue
	members []jmember
	items   []int32
	root    int32
}

// bytes returns the text of s.
func (d *jdoc) bytes(s span) []byte {
	if s.dec {
		return d.dec[s.off:s.end]
	}
	return d.in[s.off:s.end]
}

type jparser struct {
	in    []byte
	pos   int
	doc   *jdoc
	mstk  []jmember // members of the objects being read
	istk  []int32   // items of the arrays being read
	depth int
}

// parseJSON reads a whole JSON text. Errors are *SyntaxError.
func parseJSON(in []byte) (*jdoc, error) {
	if len(in) > MaxInput {
		return nil, &SyntaxError{Msg: "input larger than " + strconv.Itoa(MaxInput) + " bytes", Line: 1, Column: 1}
	}
	p := &jparser{in: in, doc: &jdoc{in: in, vals: make([]jvalue, 0, len(in)/16+4)}}
	if len(in) >= 3 && in[0] == 0xEF && in[1] == 0xBB && in[2] == 0xBF {
		p.pos = 3
	}
	p.skipSpace()
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(in) {
		return nil, p.errAt(p.pos, "unexpected "+p.describe(p.pos)+" after the top-level value")
	}
	p.doc.root = root
	return p.doc, nil
}

func (p *jparser) errAt(off int, msg string) *SyntaxError {
	line, col := position(p.in, off)
	return &SyntaxError{Offset: int64(off), Line: line, Column: col, Msg: msg}
}

// describe names the input at off for an error message.
func (p *jparser) describe(off int) string {
	if off >= len(p.in) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.in[off:])
	if r == utf8.RuneError {
		return "byte " + strconv.Quote(string(p.in[off:off+1]))
	}
	return "character " + strconv.QuoteRune(r)
}

func (p *jparser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jparser) add(v jvalue) int32 {
	p.doc.vals = append(p.doc.vals, v)
	return int32(len(p.doc.vals) - 1)
}

// value reads one value at p.pos (white space already skipped).
func (p *jparser) value() (int32, error) {
	if p.pos >= len(p.in) {
		return 0, p.errAt(p.pos, "unexpected end of input, expected a value")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return 0, err
		}
		return p.add(jvalue{kind: jString, s: s}), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", jTrue)
	case c == 'f':
		return p.literal("false", jFalse)
	case c == 'n':
		return p.literal("null", jNull)
	}
	return 0, p.errAt(p.pos, "unexpected "+p.describe(p.pos)+", expected a value")
}

func (p *jparser) literal(word string, k jkind) (int32, error) {
	for i := 0; i < len(word); i++ {
		if p.pos+i >= len(p.in) || p.in[p.pos+i] != word[i] {
			return 0, p.errAt(p.pos+i, "unexpected "+p.describe(p.pos+i)+" in literal "+word)
		}
	}
	p.pos += len(word)
	return p.add(jvalue{kind: k}), nil
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > 2*MaxDepth {
		return p.errAt(p.pos, "nested deeper than "+strconv.Itoa(2*MaxDepth))
	}
	return nil
}

func (p *jparser) object() (int32, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	p.pos++
	base := len(p.mstk)
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.skipSpace()
			if p.pos >= len(p.in) || p.in[p.pos] != '"' {
				return 0, p.errAt(p.pos, "unexpected "+p.describe(p.pos)+", expected a string key")
			}
			key, err := p.str()
			if err != nil {
				return 0, err
			}
			p.skipSpace()
			if p.pos >= len(p.in) || p.in[p.pos] != ':' {
				return 0, p.errAt(p.pos, "unexpected "+p.describe(p.pos)+", expected ':' after the key")
			}
			p.pos++
			p.skipSpace()
			v, err := p.value()
			if err != nil {
				return 0, err
			}
			p.mstk = append(p.mstk, jmember{key: key, val: v})
			p.skipSpace()
			if p.pos < len(p.in) && p.in[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.in) && p.in[p.pos] == '}' {
				p.pos++
				break
			}
			return 0, p.errAt(p.pos, "unexpected "+p.describe(p.pos)+", expected ',' or '}'")
		}
	}
	d := p.doc
	start := int32(len(d.members))
	d.members = append(d.members, p.mstk[base:]...)
	n := int32(len(p.mstk) - base)
	p.mstk = p.mstk[:base]
	p.depth--
	return p.add(jvalue{kind: jObject, start: start, n: n}), nil
}

func (p *jparser) array() (int32, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	p.pos++
	base := len(p.istk)
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
	} else {
		for {
			p.skipSpace()
			v, err := p.value()
			if err != nil {
				return 0, err
			}
			p.istk = append(p.istk, v)
			p.skipSpace()
			if p.pos < len(p.in) && p.in[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.in) && p.in[p.pos] == ']' {
				p.pos++
				break
			}
			return 0, p.errAt(p.pos, "unexpected "+p.describe(p.pos)+", expected ',' or ']'")
		}
	}
	d := p.doc
	start := int32(len(d.items))
	d.items = append(d.items, p.istk[base:]...)
	n := int32(len(p.istk) - base)
	p.istk = p.istk[:base]
	p.depth--
	return p.add(jvalue{kind: jArray, start: start, n: n}), nil
}

// number reads a number and keeps its literal.
func (p *jparser) number() (int32, error) {
	in, start := p.in, p.pos
	i := start
	if in[i] == '-' {
		i++
	}
	if i < len(in) && in[i] == '0' {
		i++
	} else if j := skipDigits(in, i); j > i {
		i = j
	} else {
		return 0, p.errAt(i, "unexpected "+p.describe(i)+" in number, expected a digit")
	}
	if i < len(in) && in[i] == '.' {
		j := skipDigits(in, i+1)
		if j == i+1 {
			return 0, p.errAt(j, "unexpected "+p.describe(j)+" after the decimal point")
		}
		i = j
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		var err error
		if i, err = p.exponent(i + 1); err != nil {
			return 0, err
		}
	}
	p.pos = i
	return p.add(jvalue{kind: jNumber, s: span{off: int32(start), end: int32(i)}}), nil
}

// skipDigits returns where the decimal digits at b[i:] end.
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// exponent reads the exponent of a number after its e or E, at i, and returns where the number ends.
func (p *jparser) exponent(i int) (int, error) {
	if i < len(p.in) && (p.in[i] == '+' || p.in[i] == '-') {
		i++
	}
	j := skipDigits(p.in, i)
	if j == i {
		return 0, p.errAt(i, "unexpected "+p.describe(i)+" in exponent")
	}
	return j, nil
}

// str reads a string at p.pos and returns its decoded text: the input itself when it has no escapes.
func (p *jparser) str() (span, error) {
	in := p.in
	start := p.pos + 1
	i := start
	for i < len(in) {
		c := in[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return span{off: int32(start), end: int32(i)}, nil
		case c == '\\':
			return p.strEscaped(start, i)
		case c < 0x20:
			return span{}, p.errAt(i, "control character "+runeName(rune(c))+" in string (escape it)")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size <= 1 {
				return span{}, p.errAt(i, "invalid UTF-8 in string")
			}
			i += size
		}
	}
	return span{}, p.errAt(p.pos, "unterminated string")
}

// strEscaped continues str from the first backslash at i, building a decoded copy.
func (p *jparser) strEscaped(start, i int) (span, error) {
	in := p.in
	d := p.doc
	first := len(d.dec)
	out := append(d.dec, in[start:i]...)
	defer func() { d.dec = out }()
	for i < len(in) {
		c := in[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return span{off: int32(first), end: int32(len(out)), dec: true}, nil
		case c == '\\':
			var n int
			var err error
			if out, n, err = p.escape(out, i); err != nil {
				return span{}, err
			}
			i += n
		case c < 0x20:
			return span{}, p.errAt(i, "control character "+runeName(rune(c))+" in string (escape it)")
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size <= 1 {
				return span{}, p.errAt(i, "invalid UTF-8 in string")
			}
			out = append(out, in[i:i+size]...)
			i += size
		}
	}
	return span{}, p.errAt(p.pos, "unterminated string")
}

// jsonEscapes maps the letter of each escape sequence but \u to the byte it stands for (0 for none).
var jsonEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape appends the character that the escape sequence at i stands for, and returns the length of the
// sequence.
func (p *jparser) escape(out []byte, i int) ([]byte, int, error) {
	if i+1 >= len(p.in) {
		return out, 0, p.errAt(i, "unterminated string")
	}
	e := p.in[i+1]
	if c := jsonEscapes[e]; c != 0 {
		return append(out, c), 2, nil
	}
	if e != 'u' {
		return out, 0, p.errAt(i, "invalid escape \\"+string(rune(e))+" in string")
	}
	r, n, err := p.unicodeEscape(i)
	if err != nil {
		return out, 0, err
	}
	return utf8.AppendRune(out, r), n, nil
}

// unicodeEscape reads \uXXXX (and a following low surrogate) at i; it returns the rune and the length read.
func (p *jparser) unicodeEscape(i int) (rune, int, error) {
	hex4 := func(j int) (rune, bool) {
		if j+6 > len(p.in) || p.in[j] != '\\' || p.in[j+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(p.in[j+2:j+6]), 16, 32)
		return rune(n), err == nil
	}
	r, ok := hex4(i)
	if !ok {
		return 0, 0, p.errAt(i, "invalid \\u escape (needs four hex digits)")
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, nil
	}
	if r < 0xDC00 {
		if lo, ok := hex4(i + 6); ok {
			if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
				return dec, 12, nil
			}
		}
	}
	return 0, 0, p.errAt(i, "unpaired surrogate in \\u escape")
}
