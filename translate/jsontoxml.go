package translate

import (
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reqgate/reqgate/internal/xmlesc"
)

// xmlDecl starts every document JSONToXML writes.
const xmlDecl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// JSONToXML translates the JSON form of a document (see docs/json.md) into XML: the single top-level key is
// the root element, "@name" members are attributes, "#text" is text, arrays are repeated elements, numbers
// and booleans are written as their literal text, null as an empty element. Known children and attributes
// are written in the interface order, unknown ones after them in JSON order. Text is always escaped.
//
// Malformed JSON is a *SyntaxError (with line and column); JSON without an XML form (an array or several
// keys at the root, bad names, nested arrays, duplicate keys, characters XML cannot carry) is a
// *StructureError.
//
// The result is a new slice: it never aliases js, and js is not kept. Safe for concurrent use.
func JSONToXML(js []byte) (xml []byte, err error) {
	start := time.Now()
	defer func() { observe(jsonToXMLSeconds, jsonToXMLBytes, start, len(js), err) }()
	d, err := parseJSON(js)
	if err != nil {
		return nil, err
	}
	root := d.vals[d.root]
	if root.kind != jObject {
		return nil, &StructureError{Msg: "the top-level value must be an object with one key, the root element"}
	}
	if root.n != 1 {
		return nil, &StructureError{Msg: "the top-level object must have exactly one key, the root element; it has " +
			strconv.Itoa(int(root.n))}
	}
	m := d.members[root.start]
	key := d.bytes(m.key)
	w := xwriter{d: d, b: make([]byte, 0, 2*len(js)+len(xmlDecl))}
	w.b = append(w.b, xmlDecl...)
	if d.vals[m.val].kind == jArray {
		return nil, &StructureError{Path: pointer([]step{{key: key, idx: -1}}), Msg: "the root element cannot be an array"}
	}
	w.path = append(w.path, step{key: key, idx: -1})
	if err := w.element(key, "", m.val); err != nil {
		return nil, err
	}
	return w.b, nil
}

// xwriter writes XML from a parsed JSON text.
type xwriter struct {
	d     *jdoc
	b     []byte
	path  []step // JSON keys and indexes down to the value being written, for errors
	depth int    // elements open
	ord   []ordered
}

// ordered is a member of an object with its place in the output.
type ordered struct {
	m    jmember
	rank int
}

func (w *xwriter) fail(msg string) error { return &StructureError{Path: pointer(w.path), Msg: msg} }

// element writes value v as element name, a child of parent. w.path ends with the value's own key or index.
func (w *xwriter) element(name []byte, parent string, v int32) error {
	if !isNameBytes(name) {
		return w.fail("key " + strconv.Quote(string(name)) + " is not an XML element name")
	}
	if w.depth >= MaxDepth {
		return w.fail("nested deeper than " + strconv.Itoa(MaxDepth) + " elements")
	}
	w.depth++
	defer func() { w.depth-- }()
	val := w.d.vals[v]
	switch val.kind {
	case jObject:
		return w.object(intern(name), parent, val)
	case jArray:
		return w.fail("an array inside an array has no XML form")
	}
	text, err := w.scalarText(val)
	if err != nil {
		return err
	}
	if allSpace(text) && lookup(parent, string(name)).container {
		text = nil // layout, as XMLToJSON reads it
	}
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	return textContent(w, name, text)
}

func (w *xwriter) failAt(key, msg string) error {
	w.path = append(w.path, step{key: []byte(key), idx: -1})
	err := w.fail(msg)
	w.path = w.path[:len(w.path)-1]
	return err
}

// scalarText is the XML text of a string, number, boolean or null.
func (w *xwriter) scalarText(val jvalue) ([]byte, error) {
	switch val.kind {
	case jString, jNumber:
		return w.d.bytes(val.s), nil
	case jTrue:
		return []byte("true"), nil
	case jFalse:
		return []byte("false"), nil
	case jNull:
		return nil, nil
	}
	return nil, w.fail("an object or array cannot be an attribute value or #text")
}

// object writes an object as element name: attributes, then text or child elements.
func (w *xwriter) object(name, parent string, val jvalue) error {
	d := w.d
	info := lookup(parent, name)
	members := d.members[val.start : val.start+val.n]
	if err := w.checkKeys(members); err != nil {
		return err
	}
	if info.variant != nil {
		info = info.forChildren(func(name string) bool { return d.hasKey(members, name) })
	}
	base := len(w.ord)
	defer func() { w.ord = w.ord[:base] }()
	text, children, err := w.splitMembers(info, members)
	if err != nil {
		return err
	}
	if info.container && allSpace(text) {
		text = nil // layout, as XMLToJSON reads it
	}
	if len(text) > 0 && children > 0 {
		return w.failAt("#text", "#text together with child elements has no XML form here")
	}
	if len(w.ord)-base > maxAttrs {
		return w.fail("more than " + strconv.Itoa(maxAttrs) + " attributes")
	}
	if err := w.startTag(name, base); err != nil {
		return err
	}
	w.ord = w.ord[:base]
	if children == 0 {
		return textContent(w, name, text)
	}
	return w.childElements(name, info, members, base)
}

// hasKey reports whether one of members has the key name.
func (d *jdoc) hasKey(members []jmember, name string) bool {
	for _, m := range members {
		if string(d.bytes(m.key)) == name {
			return true
		}
	}
	return false
}

// splitMembers splits the members of an object by what they become: attributes are queued on w.ord with
// their rank, known ones first in interface order; it returns the text of "#text" and the number of
// members that are child elements.
func (w *xwriter) splitMembers(info *elemInfo, members []jmember) (text []byte, children int, err error) {
	base := len(w.ord)
	for _, m := range members {
		key := w.d.bytes(m.key) // not empty: checkKeys
		switch {
		case key[0] == '@':
			r := rank(info.attrs, string(key[1:]))
			if r == len(info.attrs) {
				r += len(w.ord) - base
			}
			w.ord = append(w.ord, ordered{m: m, rank: r})
		case string(key) == "#text":
			if text, err = w.memberText(m); err != nil {
				return nil, 0, err
			}
		case key[0] == '#':
			return nil, 0, w.failAt(string(key), "unknown special key "+strconv.Quote(string(key))+" (only #text)")
		default:
			children++
		}
	}
	return text, children, nil
}

// memberText is the XML text of the value of m, which must be a scalar.
func (w *xwriter) memberText(m jmember) ([]byte, error) {
	w.path = append(w.path, step{key: w.d.bytes(m.key), idx: -1})
	t, err := w.scalarText(w.d.vals[m.val])
	w.path = w.path[:len(w.path)-1]
	return t, err
}

// startTag writes <name and the attributes queued on w.ord after base, in rank order.
func (w *xwriter) startTag(name string, base int) error {
	sortOrdered(w.ord[base:])
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	for _, o := range w.ord[base:] {
		if err := w.attr(o.m); err != nil {
			return err
		}
	}
	return nil
}

// attr writes member m, whose key is "@" and a name, as an attribute.
func (w *xwriter) attr(m jmember) error {
	full := w.d.bytes(m.key)
	key := full[1:]
	if !isNameBytes(key) {
		return w.failAt(string(full), "key "+strconv.Quote(string(full))+" is not an XML attribute name")
	}
	w.path = append(w.path, step{key: full, idx: -1})
	t, err := w.scalarText(w.d.vals[m.val])
	if err == nil {
		w.b = append(w.b, ' ')
		w.b = append(w.b, key...)
		w.b = append(w.b, '=', '"')
		err = w.escape(t, true)
		w.b = append(w.b, '"')
	}
	w.path = w.path[:len(w.path)-1]
	return err
}

// textContent ends the start tag of element name: with its text and end tag, or as an empty-element tag
// when there is no text. The name comes as the JSON key's bytes or as an interned string, neither converted.
func textContent[T string | []byte](w *xwriter, name T, text []byte) error {
	if len(text) == 0 {
		w.b = append(w.b, "/>"...)
		return nil
	}
	w.b = append(w.b, '>')
	if err := w.escape(text, false); err != nil {
		return err
	}
	w.b = append(w.b, "</"...)
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
	return nil
}

// childElements ends the start tag of element name and writes the members that are child elements (an array
// as one element per item), known ones first in interface order, and the end tag; when they are all empty
// arrays, the start tag becomes an empty-element tag. w.ord after base is free for their order.
func (w *xwriter) childElements(name string, info *elemInfo, members []jmember, base int) error {
	d := w.d
	for _, m := range members {
		key := d.bytes(m.key)
		if key[0] == '@' || key[0] == '#' {
			continue
		}
		r := rank(info.order, string(key))
		if r == len(info.order) {
			r += len(w.ord) - base
		}
		w.ord = append(w.ord, ordered{m: m, rank: r})
	}
	sortOrdered(w.ord[base:])
	w.b = append(w.b, '>')
	open := len(w.b)
	// The elements written below use w.ord beyond its end and restore it, so it is read afresh each time.
	for k := base; k < len(w.ord); k++ {
		m := w.ord[k].m
		key := d.bytes(m.key)
		cv := d.vals[m.val]
		w.path = append(w.path, step{key: key, idx: -1})
		switch {
		case cv.kind != jArray:
			if err := w.element(key, name, m.val); err != nil {
				return err
			}
		case cv.n == 0 && info.arrays[string(key)] == 0:
			// [] where the interface has one element, not a list of them (a multiple picklist's value sent as
			// an empty list): the empty value, as null is.
			if err := w.emptyElement(key); err != nil {
				return err
			}
		default:
			for j, item := range d.items[cv.start : cv.start+cv.n] {
				w.path = append(w.path, step{idx: j})
				if err := w.element(key, name, item); err != nil {
					return err
				}
				w.path = w.path[:len(w.path)-1]
			}
		}
		w.path = w.path[:len(w.path)-1]
	}
	if len(w.b) == open { // only empty arrays
		w.b = append(w.b[:open-1], "/>"...)
		return nil
	}
	w.endTag(name)
	return nil
}

// emptyElement writes <name/>.
func (w *xwriter) emptyElement(name []byte) error {
	if !isNameBytes(name) {
		return w.fail("key " + strconv.Quote(string(name)) + " is not an XML element name")
	}
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	w.b = append(w.b, "/>"...)
	return nil
}

// endTag writes </name>.
func (w *xwriter) endTag(name string) {
	w.b = append(w.b, "</"...)
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
}

// checkKeys rejects empty and duplicate keys (JSON allows them; XML has no form for them).
func (w *xwriter) checkKeys(members []jmember) error {
	d := w.d
	for i, m := range members {
		key := d.bytes(m.key)
		if len(key) == 0 {
			return w.failAt("", "empty key")
		}
		if len(members) <= 16 {
			for _, o := range members[:i] {
				if string(d.bytes(o.key)) == string(key) {
					return w.failAt(string(key), "duplicate key "+strconv.Quote(string(key)))
				}
			}
		}
	}
	if len(members) > 16 {
		seen := make(map[string]struct{}, len(members))
		for _, m := range members {
			key := d.bytes(m.key)
			if _, dup := seen[string(key)]; dup {
				return w.failAt(string(key), "duplicate key "+strconv.Quote(string(key)))
			}
			seen[string(key)] = struct{}{}
		}
	}
	return nil
}

// sortOrdered sorts by rank, keeping JSON order among equal ranks.
func sortOrdered(o []ordered) {
	if len(o) <= 12 {
		for j := 1; j < len(o); j++ {
			for k := j; k > 0 && o[k].rank < o[k-1].rank; k-- {
				o[k], o[k-1] = o[k-1], o[k]
			}
		}
		return
	}
	sort.SliceStable(o, func(a, b int) bool { return o[a].rank < o[b].rank })
}

// escape appends text escaped for XML by the rule of package xmlesc. A character XML cannot carry is an
// error: the translation never changes a text.
func (w *xwriter) escape(s []byte, attr bool) error {
	b, bad := xmlesc.AppendStrict(w.b, s, attr)
	w.b = b
	if bad >= 0 {
		r, _ := utf8.DecodeRune(s[bad:])
		return w.fail("character " + runeName(r) + " cannot be written in XML")
	}
	return nil
}

// isNameBytes reports whether b is exactly one XML name.
func isNameBytes(b []byte) bool { return len(b) > 0 && nameLen(b) == len(b) }

// step is one step of a path: an object key, or an array index when idx >= 0.
type step struct {
	key []byte
	idx int
}

// pointer formats a path as a JSON Pointer (RFC 6901).
func pointer(path []step) string {
	var sb strings.Builder
	for _, s := range path {
		sb.WriteByte('/')
		if s.idx >= 0 {
			sb.WriteString(strconv.Itoa(s.idx))
			continue
		}
		p := strings.ReplaceAll(string(s.key), "~", "~0")
		sb.WriteString(strings.ReplaceAll(p, "/", "~1"))
	}
	return sb.String()
}
