package translate

import (
	"bytes"
	"strconv"
)

// This file reads an XML document into a small tree (xdoc). It is a strict, non-validating reader for the
// documents of the interface: UTF-8 only, no DOCTYPE (so no entity expansion), the five predefined entities
// and character references only. Comments and processing instructions are dropped. Names are kept as
// written (namespace prefixes included), so nothing is lost on the way back.

// MaxDepth is the deepest element nesting either direction accepts (the interface needs 6).
const MaxDepth = 256

// MaxInput is the largest document either direction accepts; callers should limit bodies well below it.
const MaxInput = 64 << 20

// maxAttrs is the most attributes one element may have.
const maxAttrs = 256

// xnode is one element.
type xnode struct {
	name      string
	info      *elemInfo
	text      []byte // character data of an element without child elements
	attrStart int32  // attrs[attrStart:attrEnd] of the document
	attrEnd   int32
	first     int32 // first child, -1 when none
	last      int32 // last child
	next      int32 // next sibling, -1 when none
	nextSame  int32 // next sibling of the same name, set while writing JSON
}

// xattr is one attribute.
type xattr struct {
	name  string
	value []byte
}

// xdoc is a parsed document; nodes[0] is the root.
type xdoc struct {
	nodes []xnode
	attrs []xattr
}

// open is an element whose end tag has not been read yet.
type openElem struct {
	node     int32
	start    int  // offset of its start tag, for errors
	children bool // a child element was read
	textOff  int  // offset of the first non-space text, -1 when none
	owned    bool // text is a private copy that may be appended to
}

// xparser holds the state of one parse.
type xparser struct {
	in    []byte
	dec   []byte // decoded text: one buffer for the document instead of one allocation per text
	pos   int
	doc   *xdoc
	stack []openElem
}

// parseXML reads a whole document.
func parseXML(in []byte) (*xdoc, error) {
	if len(in) > MaxInput {
		return nil, &XMLError{Msg: "document larger than " + strconv.Itoa(MaxInput) + " bytes"}
	}
	// Every element has a start tag and most an end tag: half the '<' count avoids regrowing the nodes.
	p := &xparser{in: in, doc: &xdoc{nodes: make([]xnode, 0, bytes.Count(in, []byte("<"))/2+4)}}
	p.pos = 0
	if bytes.HasPrefix(in, []byte("\xEF\xBB\xBF")) {
		p.pos = 3
	}
	if err := p.prolog(); err != nil {
		return nil, err
	}
	if err := p.element(); err != nil {
		return nil, err
	}
	if err := p.misc(); err != nil {
		return nil, err
	}
	if p.pos < len(in) {
		return nil, p.errAt(p.pos, "content after the root element")
	}
	return p.doc, nil
}

func (p *xparser) errAt(off int, msg string) *XMLError {
	line, col := position(p.in, off)
	return &XMLError{Offset: int64(off), Line: line, Column: col, Msg: msg}
}

func (p *xparser) skipSpace() {
	for p.pos < len(p.in) && isSpace(p.in[p.pos]) {
		p.pos++
	}
}

// prolog reads the XML declaration and any comments and processing instructions before the root.
func (p *xparser) prolog() error {
	if bytes.HasPrefix(p.in[p.pos:], []byte("<?xml")) && p.pos+5 < len(p.in) && isSpace(p.in[p.pos+5]) {
		end := bytes.Index(p.in[p.pos:], []byte("?>"))
		if end < 0 {
			return p.errAt(p.pos, "unterminated XML declaration")
		}
		decl := p.in[p.pos : p.pos+end]
		if enc := declEncoding(decl); enc != "" && !eqFold(enc, "utf-8") && !eqFold(enc, "us-ascii") {
			return p.errAt(p.pos, "unsupported encoding "+strconv.Quote(enc)+" (only UTF-8)")
		}
		p.pos += end + 2
	}
	if err := p.misc(); err != nil {
		return err
	}
	if p.pos >= len(p.in) {
		return p.errAt(p.pos, "no root element")
	}
	if bytes.HasPrefix(p.in[p.pos:], []byte("<!DOCTYPE")) {
		return p.errAt(p.pos, "DOCTYPE is not allowed")
	}
	if p.in[p.pos] != '<' {
		return p.errAt(p.pos, "text before the root element")
	}
	return nil
}

// misc skips white space, comments and processing instructions outside the root element.
func (p *xparser) misc() error {
	for {
		p.skipSpace()
		rest := p.in[p.pos:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			if err := p.comment(); err != nil {
				return err
			}
		case bytes.HasPrefix(rest, []byte("<?")):
			if err := p.pi(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

func (p *xparser) comment() error {
	end := bytes.Index(p.in[p.pos+4:], []byte("-->"))
	if end < 0 {
		return p.errAt(p.pos, "unterminated comment")
	}
	p.pos += 4 + end + 3
	return nil
}

func (p *xparser) pi() error {
	end := bytes.Index(p.in[p.pos+2:], []byte("?>"))
	if end < 0 {
		return p.errAt(p.pos, "unterminated processing instruction")
	}
	if nameLen(p.in[p.pos+2:]) == 0 {
		return p.errAt(p.pos, "processing instruction without a target")
	}
	p.pos += 2 + end + 2
	return nil
}

// element reads the root element and everything inside it.
func (p *xparser) element() error {
	if err := p.startTag(); err != nil {
		return err
	}
	for len(p.stack) > 0 {
		if p.pos >= len(p.in) {
			top := p.stack[len(p.stack)-1]
			return p.errAt(top.start, "element <"+p.doc.nodes[top.node].name+"> is not closed")
		}
		if p.in[p.pos] != '<' {
			if err := p.text(); err != nil {
				return err
			}
			continue
		}
		rest := p.in[p.pos:]
		var err error
		switch {
		case len(rest) > 1 && rest[1] == '/':
			err = p.endTag()
		case bytes.HasPrefix(rest, []byte("<!--")):
			err = p.comment()
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			err = p.cdata()
		case bytes.HasPrefix(rest, []byte("<?")):
			err = p.pi()
		case len(rest) > 1 && rest[1] == '!':
			err = p.errAt(p.pos, "unexpected markup declaration")
		default:
			err = p.startTag()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// startTag reads <name attr="v" ...> or <name .../> at p.pos.
func (p *xparser) startTag() error {
	start := p.pos
	p.pos++
	n := nameLen(p.in[p.pos:])
	if n == 0 {
		return p.errAt(p.pos, "expected an element name")
	}
	rawName := p.in[p.pos : p.pos+n]
	p.pos += n
	if len(p.stack) >= MaxDepth {
		return p.errAt(start, "elements nested deeper than "+strconv.Itoa(MaxDepth))
	}
	idx, err := p.addElement(rawName)
	if err != nil {
		return err
	}
	d := p.doc
	name := d.nodes[idx].name
	for {
		hadSpace := p.pos < len(p.in) && isSpace(p.in[p.pos])
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.errAt(start, "unterminated start tag <"+name+">")
		}
		switch c := p.in[p.pos]; {
		case c == '>':
			p.pos++
			d.nodes[idx].attrEnd = int32(len(d.attrs))
			p.stack = append(p.stack, openElem{node: idx, start: start, textOff: -1})
			return nil
		case c == '/':
			if p.pos+1 >= len(p.in) || p.in[p.pos+1] != '>' {
				return p.errAt(p.pos, "expected /> in <"+name+">")
			}
			p.pos += 2
			d.nodes[idx].attrEnd = int32(len(d.attrs))
			return nil
		case !hadSpace:
			return p.errAt(p.pos, "expected white space before an attribute in <"+name+">")
		}
		if err := p.attr(idx, name); err != nil {
			return err
		}
	}
}

// addElement appends the element named rawName to the document as the last child of the innermost open
// element, and returns its index.
func (p *xparser) addElement(rawName []byte) (int32, error) {
	d := p.doc
	parent := ""
	var parentIdx int32 = -1
	if len(p.stack) > 0 {
		top := &p.stack[len(p.stack)-1]
		parentIdx = top.node
		parent = d.nodes[parentIdx].name
		if top.textOff >= 0 {
			return 0, p.errAt(top.textOff, "text mixed with child elements in <"+parent+">")
		}
		top.children = true
		d.nodes[parentIdx].text = nil
	}
	name, info := internElem(rawName, parent)
	idx := int32(len(d.nodes))
	d.nodes = append(d.nodes, xnode{name: name, info: info, first: -1, last: -1, next: -1,
		attrStart: int32(len(d.attrs))})
	if parentIdx >= 0 {
		pn := &d.nodes[parentIdx]
		if pn.first < 0 {
			pn.first = idx
		} else {
			d.nodes[pn.last].next = idx
		}
		pn.last = idx
	}
	return idx, nil
}

// attr reads one name="value" of element idx.
func (p *xparser) attr(idx int32, elem string) error {
	d := p.doc
	n := nameLen(p.in[p.pos:])
	if n == 0 {
		return p.errAt(p.pos, "expected an attribute name in <"+elem+">")
	}
	rawName := p.in[p.pos : p.pos+n]
	nameOff := p.pos
	p.pos += n
	p.skipSpace()
	if p.pos >= len(p.in) || p.in[p.pos] != '=' {
		return p.errAt(p.pos, "expected = after attribute "+string(rawName))
	}
	p.pos++
	p.skipSpace()
	if p.pos >= len(p.in) || (p.in[p.pos] != '"' && p.in[p.pos] != '\'') {
		return p.errAt(p.pos, "expected a quoted value for attribute "+string(rawName))
	}
	q := p.in[p.pos]
	p.pos++
	end := bytes.IndexByte(p.in[p.pos:], q)
	if end < 0 {
		return p.errAt(p.pos, "unterminated value of attribute "+string(rawName))
	}
	raw := p.in[p.pos : p.pos+end]
	if i := bytes.IndexByte(raw, '<'); i >= 0 {
		return p.errAt(p.pos+i, "< in the value of attribute "+string(rawName))
	}
	val, _, err := p.decode(raw, p.pos, true)
	if err != nil {
		return err
	}
	p.pos += end + 1
	first := d.nodes[idx].attrStart
	if int(int32(len(d.attrs))-first) >= maxAttrs {
		return p.errAt(nameOff, "more than "+strconv.Itoa(maxAttrs)+" attributes in <"+elem+">")
	}
	for _, a := range d.attrs[first:] {
		if a.name == string(rawName) {
			return p.errAt(nameOff, "duplicate attribute "+a.name+" in <"+elem+">")
		}
	}
	d.attrs = append(d.attrs, xattr{name: intern(rawName), value: val})
	return nil
}

// endTag reads </name> and closes the innermost open element.
func (p *xparser) endTag() error {
	start := p.pos
	p.pos += 2
	n := nameLen(p.in[p.pos:])
	top := p.stack[len(p.stack)-1]
	name := p.doc.nodes[top.node].name
	if n == 0 || string(p.in[p.pos:p.pos+n]) != name {
		return p.errAt(start, "expected </"+name+">")
	}
	p.pos += n
	p.skipSpace()
	if p.pos >= len(p.in) || p.in[p.pos] != '>' {
		return p.errAt(p.pos, "expected > to end </"+name+">")
	}
	p.pos++
	if top.children && top.textOff >= 0 {
		return p.errAt(top.textOff, "text mixed with child elements in <"+name+">")
	}
	p.stack = p.stack[:len(p.stack)-1]
	return nil
}

// text reads character data up to the next '<'.
func (p *xparser) text() error {
	end := bytes.IndexByte(p.in[p.pos:], '<')
	if end < 0 {
		end = len(p.in) - p.pos
	}
	raw := p.in[p.pos : p.pos+end]
	val, space, err := p.decode(raw, p.pos, false)
	if err != nil {
		return err
	}
	p.addText(val, space, p.pos)
	p.pos += end
	return nil
}

// cdata reads a CDATA section.
func (p *xparser) cdata() error {
	start := p.pos + len("<![CDATA[")
	end := bytes.Index(p.in[start:], []byte("]]>"))
	if end < 0 {
		return p.errAt(p.pos, "unterminated CDATA section")
	}
	raw := p.in[start : start+end]
	val, err := p.checkCDATA(raw, start)
	if err != nil {
		return err
	}
	p.addText(val, allSpace(val), p.pos)
	p.pos = start + end + 3
	return nil
}

// addText appends character data to the innermost open element.
func (p *xparser) addText(val []byte, space bool, off int) {
	top := &p.stack[len(p.stack)-1]
	if top.children {
		if !space && top.textOff < 0 {
			top.textOff = off
		}
		return
	}
	if !space && top.textOff < 0 {
		top.textOff = off
	}
	n := &p.doc.nodes[top.node]
	switch {
	case len(val) == 0:
		if n.text == nil {
			n.text = val
		}
	case n.text == nil:
		n.text = val
	default:
		if !top.owned {
			n.text = append(make([]byte, 0, len(n.text)+len(val)), n.text...)
			top.owned = true
		}
		n.text = append(n.text, val...)
	}
}
