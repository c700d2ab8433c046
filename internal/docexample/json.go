package docexample

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// unelide makes the JSON of a page valid: a `...` where an object member is expected becomes the member
// "\u0000...": null, anywhere else the string "\u0000..." (the elided marker).
func unelide(s string) string {
	var (
		out      strings.Builder
		inString bool
		stack    []byte // '{' or '['
		keyPos   bool   // a member name is expected next
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			out.WriteByte(c)
			if c == '\\' && i+1 < len(s) {
				i++
				out.WriteByte(s[i])
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			keyPos = false
		case '{':
			stack = append(stack, c)
			keyPos = true
		case '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			keyPos = len(stack) > 0 && stack[len(stack)-1] == '{'
		case '.':
			if strings.HasPrefix(s[i:], "...") {
				if keyPos {
					out.WriteString(`"\u0000...":null`)
				} else {
					out.WriteString(`"\u0000..."`)
				}
				i += 2
				keyPos = false
				continue
			}
		}
		out.WriteByte(c)
	}
	return out.String()
}

func parseJSON(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return n, nil
}

func decodeValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{name: "object"}
		if t == '[' {
			n.name = "array"
		}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			if t == '[' && v.name == "string" && v.text == elided {
				v = &node{name: elided}
			}
			n.children = append(n.children, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case string:
		return &node{name: "string", text: t}, nil
	case json.Number:
		return &node{name: "number", text: t.String()}, nil
	case bool:
		return &node{name: "bool"}, nil
	default:
		return &node{name: "null"}, nil
	}
}

func compareJSON(doc string, got []byte) []string {
	d, err := parseJSON([]byte(unelide(doc)))
	if err != nil {
		return []string{fmt.Sprintf("the page's JSON does not parse: %v", err)}
	}
	g, err := parseJSON(got)
	if err != nil {
		return []string{fmt.Sprintf("the body is not the JSON the page shows (%v): %.300q", err, got)}
	}
	return explainJSON("", d, g, "")
}

// matchJSON reports whether the JSON value g, a member named key (or an item: ""), has the shape of d.
func matchJSON(key string, d, g *node) bool {
	if d.name == "string" && d.text == elided {
		return true
	}
	if d.name != g.name {
		return false
	}
	switch d.name {
	case "string":
		c, byShape := textCompared(key)
		return !c || byShape && sameShape(d.text, g.text) || !byShape && d.text == g.text
	case "array":
		return matchList(d.children, g.children, func(d, g *node) bool { return matchJSON("", d, g) })
	case "object":
		open := slices.Contains(d.keys, elided)
		if !open && len(d.keys) != len(g.keys) {
			return false
		}
		for i, k := range d.keys {
			if k == elided {
				continue
			}
			j := slices.Index(g.keys, k)
			if j < 0 || !matchJSON(k, d.children[i], g.children[j]) {
				return false
			}
		}
	}
	return true
}

// explainJSON returns where g differs from d (at path), for a reader of a failed test.
func explainJSON(key string, d, g *node, path string) []string {
	if matchJSON(key, d, g) {
		return nil
	}
	at := path
	if at == "" {
		at = "/"
	}
	switch {
	case d.name != g.name:
		return []string{fmt.Sprintf("%s: a JSON %s, the page shows a %s", at, g.name, d.name)}
	case d.name == "string":
		return []string{fmt.Sprintf("%s: %q, the page shows %q", at, g.text, d.text)}
	case d.name == "object":
		var missing, extra []string
		for _, k := range d.keys {
			if k != elided && !slices.Contains(g.keys, k) {
				missing = append(missing, k)
			}
		}
		for _, k := range g.keys {
			if !slices.Contains(d.keys, k) {
				extra = append(extra, k)
			}
		}
		if len(missing) > 0 || len(extra) > 0 && !slices.Contains(d.keys, elided) {
			return []string{fmt.Sprintf("%s: keys %v, the page shows %v", at, g.keys, printable(d.keys))}
		}
		for i, k := range d.keys {
			if k == elided {
				continue
			}
			if e := explainJSON(k, d.children[i], g.children[slices.Index(g.keys, k)], path+"/"+k); e != nil {
				return e
			}
		}
	case d.name == "array" && !slices.Contains(names(d.children), elided) && len(d.children) == len(g.children):
		for i := range d.children {
			if e := explainJSON("", d.children[i], g.children[i], fmt.Sprintf("%s/%d", path, i)); e != nil {
				return e
			}
		}
	case d.name == "array":
		itemMatch := func(d, g *node) bool { return matchJSON("", d, g) }
		if di, gi := unmatched(d.children, g.children, itemMatch); gi >= 0 {
			return explainJSON("", d.children[di], g.children[gi], fmt.Sprintf("%s/%d", path, gi))
		}
	}
	return []string{fmt.Sprintf("%s: %d items, which do not have the shape of the page's %d", at, len(g.children), len(d.children))}
}

func printable(keys []string) []string {
	out := slices.Clone(keys)
	for i, k := range out {
		if k == elided {
			out[i] = "..."
		}
	}
	return out
}
