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
	var stack []*Node
	var root *Node
	name := func(n xml.Name) string {
		if n.Space != "" {
			return n.Space + ":" + n.Local
		}
		return n.Local
	}
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &Node{Name: name(t.Name)}
			for _, a := range t.Attr {
				v := strings.Map(func(r rune) rune {
					if r == '\t' || r == '\n' || r == '\r' {
						return ' '
					}
					return r
				}, a.Value)
				n.Attrs = append(n.Attrs, name(a.Name)+"="+v)
			}
			sort.Strings(n.Attrs)
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Kids = append(p.Kids, n)
			} else if root != nil {
				return nil, fmt.Errorf("second root element")
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].Name != name(t.Name) {
				return nil, fmt.Errorf("mismatched end tag %s", name(t.Name))
			}
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1].Name
			}
			if len(n.Kids) > 0 || (isContainer(parent, n.Name) && strings.TrimLeft(n.Text, " \t\r\n") == "") {
				if strings.TrimLeft(n.Text, " \t\r\n") != "" {
					return nil, fmt.Errorf("mixed content in %s", n.Name)
				}
				n.Text = ""
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(t)
			} else if strings.Trim(string(t), " \t\r\n") != "" && string(t) != "\uFEFF" {
				return nil, fmt.Errorf("text outside the root element")
			}
		case xml.Directive:
			return nil, fmt.Errorf("directive")
		}
	}
	if root == nil || len(stack) > 0 {
		return nil, fmt.Errorf("incomplete document")
	}
	return root, nil
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
