package translate

import (
	"sort"
	"time"
	"unicode/utf8"
)

// XMLToJSON translates an XML document of the interface into its JSON form (see docs/json.md): one
// top-level key named after the root element, child elements as keys, attributes as "@name", the text of an
// element with attributes as "#text", repeated elements of the interface always as arrays, integers of the
// interface as numbers, all other text as strings. The output is compact and its keys follow the interface
// order. Errors are *XMLError.
//
// The result is a new slice: it never aliases xml, and xml is not kept. Safe for concurrent use.
func XMLToJSON(xml []byte) (js []byte, err error) {
	start := time.Now()
	defer func() { observe(xmlToJSONSeconds, xmlToJSONBytes, start, len(xml), err) }()
	d, err := parseXML(xml)
	if err != nil {
		return nil, err
	}
	w := jwriter{d: d, b: make([]byte, 0, len(xml)*3/4+64)}
	w.b = append(w.b, '{')
	w.b = appendJSONString(w.b, d.nodes[0].name)
	w.b = append(w.b, ':')
	w.value(0)
	w.b = append(w.b, '}')
	return w.b, nil
}

// jwriter writes the JSON form of a parsed document.
type jwriter struct {
	d      *xdoc
	b      []byte
	groups []group // a stack: the groups of every element being written
}

// group is the children of one element that share a name.
type group struct {
	name  string
	rank  int
	first int32 // first child of this name; the rest follow nextSame
	last  int32
	count int
}

// manyNames is the number of distinct child names above which grouping uses a map instead of a scan.
const manyNames = 32

// value writes the JSON value of element i.
func (w *jwriter) value(i int32) {
	d := w.d
	n := &d.nodes[i]
	info := n.info
	attrs := d.attrs[n.attrStart:n.attrEnd]
	if n.first < 0 && (!info.container || !allSpace(n.text)) {
		if len(attrs) == 0 {
			w.scalar(n.text, info.integer)
		} else {
			w.leafObject(n, attrs)
		}
		return
	}
	if info.variant != nil {
		info = info.forChildren(func(name string) bool { return d.hasChild(n, name) })
	}
	w.b = append(w.b, '{')
	comma := w.attrs(info, attrs)
	base := len(w.groups)
	w.group(n, info)
	w.addEmptyArrays(base, info)
	gs := w.groups[base:]
	sortGroups(gs)
	nullable := info.nullable != nil && (info.nullableIf == "" || d.hasChild(n, info.nullableIf))
	for _, g := range gs {
		if comma {
			w.b = append(w.b, ',')
		}
		comma = true
		w.member(g, info, nullable)
	}
	w.groups = w.groups[:base]
	w.b = append(w.b, '}')
}

// leafObject writes the value of an element with text and attributes: an object of its attributes and
// "#text".
func (w *jwriter) leafObject(n *xnode, attrs []xattr) {
	w.b = append(w.b, '{')
	w.attrs(n.info, attrs)
	w.b = append(w.b, `,"#text":`...)
	w.scalar(n.text, n.info.integer)
	w.b = append(w.b, '}')
}

// isEmpty reports whether element i has no text, attribute or child element.
func (d *xdoc) isEmpty(i int32) bool {
	n := &d.nodes[i]
	return n.first < 0 && n.attrStart == n.attrEnd && len(n.text) == 0
}

// hasChild reports whether n has a child element called name.
func (d *xdoc) hasChild(n *xnode, name string) bool {
	for c := n.first; c >= 0; c = d.nodes[c].next {
		if d.nodes[c].name == name {
			return true
		}
	}
	return false
}

// addEmptyArrays adds an empty group, after base, for each child the interface always writes as an array
// and the element does not have, so that it is written as [].
func (w *jwriter) addEmptyArrays(base int, info *elemInfo) {
	for name, kind := range info.arrays {
		if kind == always && !w.hasGroup(base, name) {
			w.groups = append(w.groups, group{name: name, rank: rank(info.order, name), first: -1})
		}
	}
}

// sortGroups sorts by rank, keeping document order among equal ranks.
func sortGroups(gs []group) {
	if len(gs) > 8 {
		sort.SliceStable(gs, func(a, b int) bool { return gs[a].rank < gs[b].rank })
		return
	}
	for j := 1; j < len(gs); j++ {
		for k := j; k > 0 && gs[k].rank < gs[k-1].rank; k-- {
			gs[k], gs[k-1] = gs[k-1], gs[k]
		}
	}
}

// member writes the children of one name as a member of their parent's object: one value, or an array
// when there are several or the interface makes the name an array. nullable says that info's nullable
// children apply: such a child written empty is null.
func (w *jwriter) member(g group, info *elemInfo, nullable bool) {
	w.b = appendJSONString(w.b, g.name)
	w.b = append(w.b, ':')
	if g.count == 1 && info.arrays[g.name] == 0 {
		if nullable && info.nullable[g.name] && w.d.isEmpty(g.first) {
			w.b = append(w.b, "null"...)
			return
		}
		w.value(g.first)
		return
	}
	w.b = append(w.b, '[')
	for c := g.first; c >= 0; c = w.d.nodes[c].nextSame {
		if c != g.first {
			w.b = append(w.b, ',')
		}
		w.value(c)
	}
	w.b = append(w.b, ']')
}

// group collects the children of n by name onto w.groups, linking children of one name by nextSame. The
// rank of a known child is its place in the interface order; unknown children follow in document order.
func (w *jwriter) group(n *xnode, info *elemInfo) {
	d := w.d
	base := len(w.groups)
	order := info.order
	var index map[string]int
	for c := n.first; c >= 0; c = d.nodes[c].next {
		cn := &d.nodes[c]
		cn.nextSame = -1
		gi := -1
		if index != nil {
			if k, ok := index[cn.name]; ok {
				gi = k
			}
		} else {
			for k := base; k < len(w.groups); k++ {
				if w.groups[k].name == cn.name {
					gi = k
					break
				}
			}
		}
		if gi >= 0 {
			g := &w.groups[gi]
			d.nodes[g.last].nextSame = c
			g.last = c
			g.count++
			continue
		}
		r := rank(order, cn.name)
		if r == len(order) {
			r += len(w.groups) - base
		}
		w.groups = append(w.groups, group{name: cn.name, rank: r, first: c, last: c, count: 1})
		if index != nil {
			index[cn.name] = len(w.groups) - 1
		} else if len(w.groups)-base > manyNames {
			index = make(map[string]int, 2*manyNames)
			for k := base; k < len(w.groups); k++ {
				index[w.groups[k].name] = k
			}
		}
	}
}

func (w *jwriter) hasGroup(base int, name string) bool {
	for k := base; k < len(w.groups); k++ {
		if w.groups[k].name == name {
			return true
		}
	}
	return false
}

// attrs writes the attributes as "@name" members, known ones in interface order, and reports whether it
// wrote any.
func (w *jwriter) attrs(info *elemInfo, attrs []xattr) bool {
	if len(attrs) == 0 {
		return false
	}
	comma := false
	// Known attributes first, in interface order, then the rest in document order.
	for _, name := range info.attrs {
		for _, a := range attrs {
			if a.name == name {
				w.attr(a, info.intAttrs[a.name], &comma)
			}
		}
	}
	for _, a := range attrs {
		if rank(info.attrs, a.name) == len(info.attrs) {
			w.attr(a, false, &comma)
		}
	}
	return true
}

func (w *jwriter) attr(a xattr, integer bool, comma *bool) {
	if *comma {
		w.b = append(w.b, ',')
	}
	*comma = true
	w.b = append(w.b, `"@`...)
	w.b = appendJSONStringBody(w.b, a.name)
	w.b = append(w.b, `":`...)
	w.scalar(a.value, integer)
}

// scalar writes text as a JSON number when integer is set and the text is a plain decimal integer that
// JSON readers hold exactly, as null when integer is set and the text is empty (an integer left unset, such as
// the <sort /> of a system field), else as a string.
func (w *jwriter) scalar(text []byte, integer bool) {
	if integer && isJSONInt(text) {
		w.b = append(w.b, text...)
		return
	}
	if integer && len(text) == 0 {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '"')
	w.b = appendJSONStringBody(w.b, text)
	w.b = append(w.b, '"')
}

// maxSafe is 2^53-1, the largest integer every JSON reader (JavaScript among them) holds exactly.
const maxSafe = "9007199254740991"

// isJSONInt reports whether b is a decimal integer without sign '+', leading zeros or "-0", within ±(2^53-1):
// the integers whose JSON number reads back to the same text.
func isJSONInt(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
		if len(b) == 1 && b[0] == '0' {
			return false
		}
	}
	if len(b) == 0 || len(b) > len(maxSafe) || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) < len(maxSafe) || string(b) <= maxSafe
}

// appendJSONString appends s as a quoted JSON string.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	b = appendJSONStringBody(b, s)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONStringBody appends s escaped for a JSON string: quote, backslash, control characters, and
// U+2028/U+2029 (which JavaScript source cannot hold raw). s is valid UTF-8 (the XML reader checked it).
func appendJSONStringBody[T string | []byte](b []byte, s T) []byte {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[last:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			last = i
			continue
		}
		// U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
		if c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
			b = append(b, s[last:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
			i += 3
			last = i
			continue
		}
		i++
	}
	return append(b, s[last:]...)
}
