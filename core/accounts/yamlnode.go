package accounts

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/reqgate/reqgate/internal/yamlnode"
)

// Limits that keep a hostile or broken file from costing much: the file's size, and the number of YAML nodes
// read (aliases are followed, so an alias bomb hits this limit instead of the memory).
const (
	MaxFileBytes = 16 << 20
	maxNodes     = 1 << 20
	maxText      = 4096 // labels, names, descriptions, help texts
)

// reader walks the YAML node tree of one file, turning every problem into an *Error with its line.
type reader struct {
	file  string
	nodes int
	errs  *errList // refusals of items the reader went past
}

// skip records the refusal of one item, which the caller then leaves out and goes on to the next; it reports
// whether reading should stop instead.
func (r *reader) skip(err error) bool {
	r.errs.add(err)
	return r.errs.stop()
}

// document parses data into its single YAML document. An empty file yields nil.
func (r *reader) document(data []byte) (*yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, pos{r.file, 1}.errorf("the file is larger than %d bytes", MaxFileBytes)
	}
	doc, err := yamlnode.Decode(data)
	var ye *yamlnode.Error
	switch {
	case err == nil:
		return doc, nil
	case !errors.As(err, &ye):
		return nil, pos{r.file, 1}.errorf("malformed YAML: %v", err)
	case ye.Second:
		return nil, pos{r.file, ye.Line}.errorf("a second YAML document; an account file holds one (merge them, or pass several files)")
	case ye.Panic:
		return nil, pos{r.file, 1}.errorf("malformed YAML (%s)", ye.Reason)
	}
	return nil, pos{r.file, max(ye.Line, 1)}.errorf("malformed YAML: %s", ye.Reason)
}

func (r *reader) at(n *yaml.Node) pos { return pos{r.file, n.Line} }

// resolve follows aliases and counts the node against the file's budget.
func (r *reader) resolve(n *yaml.Node) (*yaml.Node, error) {
	n, ok := yamlnode.Resolve(n)
	if !ok {
		return nil, r.at(n).errorf("broken alias")
	}
	r.nodes++
	if r.nodes > maxNodes {
		r.errs.fatal = true
		return nil, r.at(n).errorf("the file has more than %d YAML nodes (aliases counted each time they are used)", maxNodes)
	}
	return n, nil
}

// object is a YAML mapping whose keys were checked: known, unique, plain.
type object struct {
	r    *reader
	node *yaml.Node
	what string
	keys []string              // in file order
	key  map[string]*yaml.Node // key -> key node
	val  map[string]*yaml.Node // key -> value node (not yet resolved)
}

// object reads n as a mapping named what. known lists the keys it may hold; nil allows any key.
func (r *reader) object(n *yaml.Node, what string, known []string) (*object, error) {
	n, err := r.resolve(n)
	if err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, r.at(n).errorf("%s must be a mapping (key: value lines), not %s", what, yamlnode.KindName(n))
	}
	o := &object{r: r, node: n, what: what, key: map[string]*yaml.Node{}, val: map[string]*yaml.Node{}}
	pairs, err := yamlnode.Pairs(n, r.resolve)
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		if err := o.add(p, known); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// add takes one key of the mapping, or refuses it.
func (o *object) add(p yamlnode.Pair, known []string) error {
	k := p.Key
	switch {
	case p.Problem == yamlnode.Merge:
		return o.r.at(k).errorf("merge keys (<<) are not supported")
	case p.Problem == yamlnode.NotPlain || k.Tag == "!!null":
		return o.r.at(k).errorf("%s: keys must be plain words", o.what)
	case known != nil && !slices.Contains(known, k.Value):
		return o.r.at(k).errorf("unknown key %q in %s (known keys: %s)", clip(k.Value), o.what, strings.Join(known, ", "))
	case p.Problem == yamlnode.Duplicate:
		return o.r.at(k).errorf("duplicate key %q in %s (first at line %d)", clip(k.Value), o.what, p.First.Line)
	}
	o.keys = append(o.keys, k.Value)
	o.key[k.Value] = k
	o.val[k.Value] = p.Value
	return nil
}

// where records the position of the object and of each of its values.
func (o *object) where() where {
	w := where{item: o.r.at(o.node), keys: make(map[string]pos, len(o.keys))}
	for _, k := range o.keys {
		w.keys[k] = o.r.at(o.key[k])
	}
	return w
}

// pos is the line of key (where its value starts, for a one-line value), or of the mapping when the key is
// absent.
func (o *object) pos(key string) pos {
	if k, ok := o.key[key]; ok {
		return o.r.at(k)
	}
	return o.r.at(o.node)
}

// has reports whether key is present with a non-null value.
func (o *object) has(key string) bool {
	v, ok := o.val[key]
	if !ok {
		return false
	}
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	return !(v.Kind == yaml.ScalarNode && v.Tag == "!!null")
}

// scalar returns the text of key's value ("" when absent or null).
func (o *object) scalar(key string) (string, error) {
	v, ok := o.val[key]
	if !ok {
		return "", nil
	}
	v, err := o.r.resolve(v)
	if err != nil {
		return "", err
	}
	if v.Kind != yaml.ScalarNode {
		return "", o.r.at(v).errorf("%s must be a single value, not %s", key, yamlnode.KindName(v))
	}
	if v.Tag == "!!null" {
		return "", nil
	}
	return v.Value, nil
}

// text returns key's value as text of at most max characters, without control characters except in
// multi-line texts (allowNewlines).
func (o *object) text(key string, max int, allowNewlines bool) (string, error) {
	s, err := o.scalar(key)
	if err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", o.pos(key).errorf("%s is longer than %d characters", key, max)
	}
	if !utf8.ValidString(s) {
		return "", o.pos(key).errorf("%s is not valid UTF-8", key)
	}
	for _, c := range s {
		if c < 0x20 && !(allowNewlines && (c == '\n' || c == '\t' || c == '\r')) || c == 0x7f {
			return "", o.pos(key).errorf("%s holds a control character", key)
		}
	}
	return s, nil
}

// required is text that must be present and not blank.
func (o *object) required(key string, max int) (string, error) {
	s, err := o.text(key, max, false)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", o.pos(key).errorf("%s: %s is required", o.what, key)
	}
	return s, nil
}

// int reads key's value as a decimal integer in [min, max]; ok is false when the key is absent or null.
func (o *object) int(key string, min, max int64) (n int64, ok bool, err error) {
	s, err := o.scalar(key)
	if err != nil || s == "" {
		return 0, false, err
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if perr != nil {
		return 0, false, o.pos(key).errorf("%s must be a whole number, not %q", key, clip(s))
	}
	if n < min || n > max {
		return 0, false, o.pos(key).errorf("%s must be between %d and %d, not %d", key, min, max, n)
	}
	return n, true, nil
}

// bool reads key's value as true or false (also yes/no); absent is false.
func (o *object) bool(key string) (bool, error) {
	s, err := o.scalar(key)
	if err != nil || s == "" {
		return false, err
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, o.pos(key).errorf("%s must be true or false, not %q", key, clip(s))
}

// list returns the items of key's value, which must be a list; absent or null is an empty list.
func (o *object) list(key string) ([]*yaml.Node, error) {
	v, ok := o.val[key]
	if !ok {
		return nil, nil
	}
	v, err := o.r.resolve(v)
	if err != nil {
		return nil, err
	}
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, o.r.at(v).errorf("%s must be a list (lines starting with '-'), not %s", key, yamlnode.KindName(v))
	}
	return v.Content, nil
}

// clip shortens user text quoted in an error.
func clip(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		return string(r[:40]) + "..."
	}
	return s
}

// quoteList renders allowed values for an error message.
func quoteList(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
