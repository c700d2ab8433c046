package api

import (
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/reqgate/reqgate/internal/xmlesc"
)

// xmlw builds an XML document by appending to a byte slice: faster than encoding/xml for the fixed shapes
// of the interface, and it writes CDATA sections, which encoding/xml cannot. Element names are trusted
// (they come from this package); text and attribute values are escaped by package xmlesc, CDATA here.
//
// Layout: one element per line, like the examples of docs/api.md.
type xmlw struct {
	b []byte
}

// xmlHeader starts every response document.
const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// xmlPool recycles document buffers; a record read is a few kilobytes.
var xmlPool = sync.Pool{New: func() any { return &xmlw{b: make([]byte, 0, 4096)} }}

// maxPooled keeps unusually large documents (big views, search results) out of the pool.
const maxPooled = 64 << 10

// newXML starts a document with the XML declaration. Callers may hand it back with release once its
// bytes are written; a document never released is simply garbage.
func newXML() *xmlw {
	x := xmlPool.Get().(*xmlw)
	x.b = append(x.b[:0], xmlHeader...)
	return x
}

// release returns x to the pool; neither x nor its bytes may be used afterwards.
func (x *xmlw) release() {
	if cap(x.b) <= maxPooled {
		xmlPool.Put(x)
	}
}

// bytes is the document written so far.
func (x *xmlw) bytes() []byte { return x.b }

// open writes <name> and a newline: the start of an element with child elements.
func (x *xmlw) open(name string) {
	x.b = append(x.b, '<')
	x.b = append(x.b, name...)
	x.b = append(x.b, ">\n"...)
}

// openAttrs writes <name a="v" ...> and a newline; attrs are name, value pairs.
func (x *xmlw) openAttrs(name string, attrs ...string) {
	x.startTag(name, attrs)
	x.b = append(x.b, ">\n"...)
}

// close writes </name> and a newline.
func (x *xmlw) close(name string) {
	x.b = append(x.b, "</"...)
	x.b = append(x.b, name...)
	x.b = append(x.b, ">\n"...)
}

// elem writes <name>text</name>, or <name /> for empty text.
func (x *xmlw) elem(name, text string) {
	if text == "" {
		x.empty(name)
		return
	}
	x.b = append(x.b, '<')
	x.b = append(x.b, name...)
	x.b = append(x.b, '>')
	x.text(text)
	x.endTag(name)
}

// elemInt writes <name>n</name>.
func (x *xmlw) elemInt(name string, n int64) {
	x.b = append(x.b, '<')
	x.b = append(x.b, name...)
	x.b = append(x.b, '>')
	x.b = strconv.AppendInt(x.b, n, 10)
	x.endTag(name)
}

// elemAttrs writes <name a="v" ...>text</name>; attrs are name, value pairs.
func (x *xmlw) elemAttrs(name, text string, attrs ...string) {
	x.startTag(name, attrs)
	x.b = append(x.b, '>')
	x.text(text)
	x.endTag(name)
}

// elemCDATA writes <name><![CDATA[text]]></name>.
func (x *xmlw) elemCDATA(name, text string) {
	x.b = append(x.b, '<')
	x.b = append(x.b, name...)
	x.b = append(x.b, '>')
	x.cdata(text)
	x.endTag(name)
}

// empty writes <name />.
func (x *xmlw) empty(name string) {
	x.b = append(x.b, '<')
	x.b = append(x.b, name...)
	x.b = append(x.b, " />\n"...)
}

// text writes escaped character data.
func (x *xmlw) text(s string) { x.b = xmlesc.Append(x.b, s, false) }

// cdata writes s as CDATA. A "]]>" inside s is split across two sections, the only way to carry it. A
// carriage return is written outside CDATA, as the reference &#xD;: XML readers turn a literal CR (or CR LF)
// into LF in CDATA as in text, and a section cannot hold a reference. Characters XML forbids are replaced
// by U+FFFD. An empty s is an empty section.
func (x *xmlw) cdata(s string) {
	if s == "" {
		x.b = append(x.b, "<![CDATA[]]>"...)
		return
	}
	open := false
	for i := 0; i < len(s); {
		if s[i] == '\r' {
			if open {
				x.b = append(x.b, "]]>"...)
				open = false
			}
			x.b = append(x.b, "&#xD;"...)
			i++
			continue
		}
		if !open {
			x.b = append(x.b, "<![CDATA["...)
			open = true
		}
		if s[i] == ']' && i+2 < len(s) && s[i+1] == ']' && s[i+2] == '>' {
			x.b = append(x.b, "]]]]><![CDATA[>"...)
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !xmlesc.ValidRune(r, size) {
			x.b = append(x.b, "\uFFFD"...)
		} else {
			x.b = append(x.b, s[i:i+size]...)
		}
		i += size
	}
	if open {
		x.b = append(x.b, "]]>"...)
	}
}

func (x *xmlw) startTag(name string, attrs []string) {
	x.b = append(x.b, '<')
	x.b = append(x.b, name...)
	for i := 0; i+1 < len(attrs); i += 2 {
		x.b = append(x.b, ' ')
		x.b = append(x.b, attrs[i]...)
		x.b = append(x.b, `="`...)
		x.b = xmlesc.Append(x.b, attrs[i+1], true)
		x.b = append(x.b, '"')
	}
}

func (x *xmlw) endTag(name string) {
	x.b = append(x.b, "</"...)
	x.b = append(x.b, name...)
	x.b = append(x.b, ">\n"...)
}
