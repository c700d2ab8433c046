// Package xmlcanon reads an XML document the way an independent reader (encoding/xml) sees it, reduced to
// what the XML <-> JSON mapping promises to keep, so that tests of package translate and of its real-core
// checks compare documents by one rule.
package xmlcanon

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Node is a document as an independent reader (encoding/xml) sees it, reduced to what the mapping promises
// to keep: names, attributes (as a set), text of elements without children, children in order.
type Node struct {
	Name  string
	Attrs []string // name=value, sorted
	Text  string
	Kids  []*Node
}

// Read reads doc with encoding/xml. Whitespace-only text is dropped in elements with children and in
// containers of the interface, and white space in attribute values is normalised, as XML readers must.
func Read(doc []byte, isContainer func(parent, name string) bool) (*Node, error) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	r := reader{isContainer: isContainer}
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := r.token(tok); err != nil {
			return nil, err
		}
	}
	if r.root == nil || len(r.stack) > 0 {
		return nil, fmt.Errorf("incomplete document")
	}
	return r.root, nil
}

// reader builds the Node tree of a document from its tokens.
type reader struct {
	isContainer func(parent, name string) bool
	stack       []*Node // the open elements
	root        *Node
}

func (r *reader) token(tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		return r.start(t)
	case xml.EndElement:
		return r.end(t)
	case xml.CharData:
		return r.text(t)
	case xml.Directive:
		return fmt.Errorf("directive")
	}
	return nil
}

func (r *reader) start(t xml.StartElement) error {
	n := &Node{Name: qualified(t.Name)}
	for _, a := range t.Attr {
		n.Attrs = append(n.Attrs, qualified(a.Name)+"="+strings.Map(normaliseSpace, a.Value))
	}
	sort.Strings(n.Attrs)
	switch {
	case len(r.stack) > 0:
		p := r.stack[len(r.stack)-1]
		p.Kids = append(p.Kids, n)
	case r.root != nil:
		return fmt.Errorf("second root element")
	default:
		r.root = n
	}
	r.stack = append(r.stack, n)
	return nil
}

func (r *reader) end(t xml.EndElement) error {
	if len(r.stack) == 0 || r.stack[len(r.stack)-1].Name != qualified(t.Name) {
		return fmt.Errorf("mismatched end tag %s", qualified(t.Name))
	}
	n := r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	parent := ""
	if len(r.stack) > 0 {
		parent = r.stack[len(r.stack)-1].Name
	}
	layout := strings.TrimLeft(n.Text, " \t\r\n") == ""
	if len(n.Kids) > 0 && !layout {
		return fmt.Errorf("mixed content in %s", n.Name)
	}
	if len(n.Kids) > 0 || layout && r.isContainer(parent, n.Name) {
		n.Text = ""
	}
	return nil
}

func (r *reader) text(t xml.CharData) error {
	if len(r.stack) > 0 {
		r.stack[len(r.stack)-1].Text += string(t)
		return nil
	}
	if strings.Trim(string(t), " \t\r\n") != "" && string(t) != "\uFEFF" {
		return fmt.Errorf("text outside the root element")
	}
	return nil
}

// qualified is a name as written, with its prefix.
func qualified(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// normaliseSpace is attribute-value normalisation of one character.
func normaliseSpace(r rune) rune {
	if r == '\t' || r == '\n' || r == '\r' {
		return ' '
	}
	return r
}

// Diff describes the first difference between two canonical documents ("" when equal).
func Diff(a, b *Node, path string) string {
	path += "/" + a.Name
	switch {
	case a.Name != b.Name:
		return fmt.Sprintf("%s: element %q vs %q", path, a.Name, b.Name)
	case strings.Join(a.Attrs, "\x00") != strings.Join(b.Attrs, "\x00"):
		return fmt.Sprintf("%s: attributes %q vs %q", path, a.Attrs, b.Attrs)
	case a.Text != b.Text:
		return fmt.Sprintf("%s: text %q vs %q", path, a.Text, b.Text)
	case len(a.Kids) != len(b.Kids):
		return fmt.Sprintf("%s: %d children vs %d", path, len(a.Kids), len(b.Kids))
	}
	for i := range a.Kids {
		if d := Diff(a.Kids[i], b.Kids[i], path); d != "" {
			return d
		}
	}
	return ""
}
