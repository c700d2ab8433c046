// Package yamlnode reads a YAML file of one document into yaml.v3's node tree and walks its mappings with the
// line of every key and value, for the two readers of operator files that refuse with file:line: the config
// file (package config) and the account files (core/accounts). Each reader words its own messages (both name
// what a node is by KindName); this package finds the problems: syntax, a second document, aliases, and keys
// that are not plain, merged or given twice.
package yamlnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxAliasHops bounds the aliases followed from one node.
const maxAliasHops = 64

// Error is a file that is not one YAML document.
type Error struct {
	Line   int    // 0 when the parser named no line
	Reason string // the parser's reason, without its "yaml: line N:" prefix
	Second bool   // the file holds a second document, which starts at Line
	Panic  bool   // the parser panicked; Reason is the panic's value
}

func (e *Error) Error() string {
	if e.Second {
		return fmt.Sprintf("line %d: a second YAML document", e.Line)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
}

var lineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Decode parses data, which must hold at most one YAML document, and returns the document's top node: nil
// for an empty file. A problem is an *Error. yaml.v3 is meant to report every problem as an error; a panic
// from it becomes an *Error too, so that an operator's file cannot take the process down.
func Decode(data []byte) (root *yaml.Node, err error) {
	defer func() {
		if v := recover(); v != nil {
			root, err = nil, &Error{Reason: fmt.Sprint(v), Panic: true}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntax(err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, &Error{Line: next.Line, Second: true}
	case !errors.Is(err, io.EOF):
		return nil, syntax(err)
	}
	if doc.Kind != yaml.DocumentNode {
		return &doc, nil
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// syntax turns yaml.v3's "yaml: line N: reason" into an *Error.
func syntax(err error) *Error {
	msg := err.Error()
	if m := lineErr.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{Line: n, Reason: m[2]}
	}
	return &Error{Reason: strings.TrimPrefix(msg, "yaml: ")}
}

// Resolve follows aliases to the node they name; ok is false for a broken alias (or a chain too long).
func Resolve(n *yaml.Node) (_ *yaml.Node, ok bool) {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if n.Alias == nil || hops >= maxAliasHops {
			return n, false
		}
		n = n.Alias
	}
	return n, true
}

// KindName says what n is, for a reader's message ("must be a duration, not a mapping"): "a mapping", "a
// list", "empty", "a single value", or "a broken alias" for an alias that Resolve could not follow.
func KindName(n *yaml.Node) string {
	switch {
	case IsNull(n):
		return "empty"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode:
		return "a single value"
	case n.Kind == yaml.AliasNode:
		return "a broken alias"
	}
	return "something else"
}

// IsNull reports whether n is absent or YAML's null (an empty value, ~ or null).
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// Problem is what is wrong with a key of a mapping; 0 is nothing.
type Problem int

// Problems of a key.
const (
	NotPlain  Problem = iota + 1 // not a scalar
	Merge                        // the merge key <<
	Duplicate                    // given before in the same mapping
)

// Pair is one key of a mapping with its value as written (the caller resolves it, so that it can count it).
type Pair struct {
	Raw     *yaml.Node // the key as written (an alias stays one)
	Key     *yaml.Node // the key resolved; nil when it could not be
	Value   *yaml.Node
	Problem Problem    // why the key is to be refused; 0 for a plain key
	First   *yaml.Node // Duplicate: the first key of the same name
}

// Pairs returns the keys of mapping m in file order with their values, each plain one or with the Problem the
// caller refuses it for. resolve resolves each key; its error ends the walk and is returned.
func Pairs(m *yaml.Node, resolve func(*yaml.Node) (*yaml.Node, error)) ([]Pair, error) {
	pairs := make([]Pair, 0, len(m.Content)/2)
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		p := Pair{Raw: m.Content[i], Value: m.Content[i+1]}
		k, err := resolve(p.Raw)
		if err != nil {
			return nil, err
		}
		p.Key = k
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
			p.Problem = NotPlain
		case k.Tag == "!!merge":
			p.Problem = Merge
		case first[k.Value] != nil:
			p.Problem, p.First = Duplicate, first[k.Value]
		default:
			first[k.Value] = k
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// ResolveAny is a resolve for Pairs that counts nothing: a broken alias stays an alias node (not plain).
func ResolveAny(n *yaml.Node) (*yaml.Node, error) {
	r, _ := Resolve(n)
	return r, nil
}
