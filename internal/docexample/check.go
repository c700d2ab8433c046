package docexample

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
)

// Check compares an answer with the one a page shows and returns what differs, nothing when it matches:
//
//   - the status;
//   - each header shown, by shape (see sameShape): a token with a digit in it (an id, a time, a count, a
//     tag) stands for any token with a digit, every other character must be equal;
//   - the body, by shape: for XML the element names, their order and nesting and their attribute names; for
//     JSON the keys, the JSON types of the values and the lengths of arrays. A line or item `...` stands for
//     any number of elements, items or keys. Values are not compared (ids, times and data differ from one
//     store to another), except those that name what a client reads: <message>, "message" by shape, <code>,
//     <name> and their JSON keys exactly.
//
// addr replaces DocAddress in what the page shows.
func Check(exp *Response, got *Result, addr string) []string {
	var diffs []string
	if got.Status != exp.Status {
		diffs = append(diffs, fmt.Sprintf("status %d, the page shows %d %s", got.Status, exp.Status, exp.Reason))
	}
	for _, name := range exp.Order {
		want := strings.ReplaceAll(strings.Join(exp.Header.Values(name), ", "), DocAddress, addr)
		have := strings.Join(got.Header.Values(name), ", ")
		if len(got.Header.Values(name)) == 0 {
			diffs = append(diffs, fmt.Sprintf("no %s header, the page shows %q", name, want))
		} else if !sameShape(want, have) {
			diffs = append(diffs, fmt.Sprintf("%s: %q, the page shows %q", name, have, want))
		}
	}
	if exp.Body == "" {
		return diffs
	}
	doc := strings.ReplaceAll(exp.Body, DocAddress, addr)
	var d []string
	switch {
	case strings.HasPrefix(doc, "<"):
		d = compareXML(doc, got.Body)
	case strings.HasPrefix(doc, "{"), strings.HasPrefix(doc, "["):
		d = compareJSON(doc, got.Body)
	default:
		if !sameShape(doc, strings.TrimSpace(string(got.Body))) {
			d = []string{fmt.Sprintf("body %q, the page shows %q", got.Body, doc)}
		}
	}
	return append(diffs, d...)
}

// sameShape reports whether got has the shape of doc: the same characters, except that a run of letters and
// digits that holds a digit in doc stands for any such run holding a digit in got.
func sameShape(doc, got string) bool {
	dt, gt := tokens(doc), tokens(got)
	if len(dt) != len(gt) {
		return false
	}
	for i := range dt {
		if dt[i] == gt[i] {
			continue
		}
		if !hasDigit(dt[i]) || !hasDigit(gt[i]) {
			return false
		}
	}
	return true
}

func tokens(s string) []string {
	var out []string
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i + 1
		if word(rs[i]) {
			for j < len(rs) && word(rs[j]) {
				j++
			}
		}
		out = append(out, string(rs[i:j]))
		i = j
	}
	return out
}

func hasDigit(s string) bool { return strings.ContainsFunc(s, unicode.IsDigit) }

// elided marks a `...` of the page.
const elided = "\x00..."

// node is an XML element or a JSON value, reduced to its shape.
type node struct {
	name     string   // element name; for JSON, the kind: object, array, string, number, bool, null
	attrs    []string // XML attribute names, sorted
	text     string   // the text of an XML leaf; a JSON string
	children []*node  // XML child elements; JSON array items or object member values
	keys     []string // JSON object member names, in the order of children
	decl     bool     // XML: the document starts with an XML declaration
}

// textCompared says how a leaf's value is compared: exactly, by shape, or not at all.
func textCompared(name string) (compared, byShape bool) {
	switch name {
	case "message":
		return true, true
	case "code", "name":
		return true, false
	}
	return false, false
}

func parseXML(b []byte) (*node, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := &node{}
	stack := []*node{root}
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.ProcInst:
			if t.Target == "xml" && top == root && len(root.children) == 0 {
				root.decl = true
			}
		case xml.StartElement:
			if strings.TrimSpace(text.String()) == "..." {
				top.children = append(top.children, &node{name: elided})
			}
			text.Reset()
			n := &node{name: t.Name.Local}
			for _, a := range t.Attr {
				n.attrs = append(n.attrs, a.Name.Local)
			}
			slices.Sort(n.attrs)
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			s := strings.TrimSpace(text.String())
			if len(top.children) == 0 {
				top.text = s
			}
			if s == "..." {
				// Any children, or any text.
				top.children = append(top.children, &node{name: elided})
			}
			text.Reset()
			stack = stack[:len(stack)-1]
		}
	}
	if len(root.children) != 1 {
		return nil, fmt.Errorf("%d root elements", len(root.children))
	}
	return root, nil
}

func compareXML(doc string, got []byte) []string {
	d, err := parseXML([]byte(doc))
	if err != nil {
		return []string{fmt.Sprintf("the page's XML does not parse: %v", err)}
	}
	g, err := parseXML(got)
	if err != nil {
		return []string{fmt.Sprintf("the body is not the XML the page shows (%v): %.300q", err, got)}
	}
	var diffs []string
	if d.decl && !g.decl {
		diffs = append(diffs, "the body has no XML declaration, the page shows one")
	}
	return append(diffs, explain(d.children[0], g.children[0], "/"+d.children[0].name)...)
}

// match reports whether the XML element g has the shape of d.
func match(d, g *node) bool {
	if d.name != g.name || !slices.Equal(d.attrs, g.attrs) {
		return false
	}
	if c, byShape := textCompared(d.name); c && d.text != "..." {
		if byShape && !sameShape(d.text, g.text) || !byShape && d.text != g.text {
			return false
		}
	}
	return matchList(d.children, g.children, match)
}

// matchList matches children or items, where an elided marker stands for any number of them.
func matchList(d, g []*node, match func(d, g *node) bool) bool {
	if len(d) == 0 {
		return len(g) == 0
	}
	if d[0].name == elided {
		for i := 0; i <= len(g); i++ {
			if matchList(d[1:], g[i:], match) {
				return true
			}
		}
		return false
	}
	return len(g) > 0 && match(d[0], g[0]) && matchList(d[1:], g[1:], match)
}

// explain returns where g differs from d (at path), for a reader of a failed test.
func explain(d, g *node, path string) []string {
	if match(d, g) {
		return nil
	}
	switch {
	case d.name != g.name:
		return []string{fmt.Sprintf("%s: <%s>, the page shows <%s>", path, g.name, d.name)}
	case !slices.Equal(d.attrs, g.attrs):
		return []string{fmt.Sprintf("%s: attributes %v, the page shows %v", path, g.attrs, d.attrs)}
	}
	if c, _ := textCompared(d.name); c && len(d.children) == 0 && len(g.children) == 0 {
		return []string{fmt.Sprintf("%s: %q, the page shows %q", path, g.text, d.text)}
	}
	if !slices.Contains(names(d.children), elided) && len(d.children) == len(g.children) {
		for i := range d.children {
			if e := explain(d.children[i], g.children[i], fmt.Sprintf("%s/%s[%d]", path, d.children[i].name, i+1)); e != nil {
				return e
			}
		}
	} else if di, gi := unmatched(d.children, g.children, match); gi >= 0 {
		return explain(d.children[di], g.children[gi], fmt.Sprintf("%s/%s[%d]", path, g.children[gi].name, gi+1))
	}
	return []string{fmt.Sprintf("%s: children %s, the page shows %s", path, outline(g.children), outline(d.children))}
}

// unmatched finds, in page order, the first item of d that no item of g matches, and the item of g most like
// it: its index in d and that in g, or -1 when every item matched (the lists differ in number) or g has
// none like it.
func unmatched(d, g []*node, match func(d, g *node) bool) (int, int) {
	j := 0
	for i, n := range d {
		if n.name == elided {
			continue
		}
		k := j
		for k < len(g) && !match(n, g[k]) {
			k++
		}
		if k < len(g) {
			j = k + 1
			continue
		}
		best, score := -1, 0
		for k := j; k < len(g); k++ {
			if s := likeness(n, g[k]); s > score {
				best, score = k, s
			}
		}
		return i, best
	}
	return -1, -1
}

// likeness scores how much g looks like d: the same element or kind, the same field name, shared children.
func likeness(d, g *node) int {
	if d.name != g.name {
		return 0
	}
	s := 1
	if id := identity(d); id != "" && id == identity(g) {
		s += 100
	}
	for _, c := range names(d.children) {
		if slices.Contains(names(g.children), c) {
			s++
		}
	}
	for _, k := range d.keys {
		if slices.Contains(g.keys, k) {
			s++
		}
	}
	return s
}

// identity is what names an item among its like: the text of its <name> child, or its "name" member.
func identity(n *node) string {
	if i := slices.Index(n.keys, "name"); i >= 0 {
		return n.children[i].text
	}
	for _, c := range n.children {
		if c.name == "name" {
			return c.text
		}
	}
	return ""
}

func names(ns []*node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.name)
	}
	return out
}

func outline(ns []*node) string {
	var parts []string
	for _, n := range ns {
		switch {
		case n.name == elided:
			parts = append(parts, "...")
		case n.text != "" && textComparedName(n.name):
			parts = append(parts, fmt.Sprintf("%s(%s)", n.name, n.text))
		default:
			parts = append(parts, n.name)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func textComparedName(name string) bool { c, _ := textCompared(name); return c }
