package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reqgate/reqgate/internal/yamlnode"
)

// Limits on the file, so a wrong or hostile file costs little.
const (
	maxFileBytes = 1 << 20
	maxPolicies  = 1000
	maxOverrides = 100000
)

// CheckFile validates a config file on its own, as `reqgate config check FILE` does: syntax, unknown keys, bad
// values and the rules of Validate, against the defaults of the serve role (the file's keys are the same for
// every role). It returns every refusal at once, as Load does: Validate runs also after refusals while reading,
// and stays quiet about the keys already refused.
func CheckFile(path string) error {
	data, err := readFile(path)
	if err != nil {
		return err
	}
	c := Default(RoleServe)
	errs := c.applyFile(path, data)
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Source: path, Reason: fmt.Sprintf("cannot read config file: %v", unwrapPathError(err))}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, &Error{Source: path, Reason: fmt.Sprintf("cannot read config file: %v", unwrapPathError(err))}
	}
	if len(data) > maxFileBytes {
		return nil, &Error{Source: path, Reason: fmt.Sprintf("config file larger than %d bytes", maxFileBytes)}
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileReader walks the YAML node tree of one file into a Config, collecting every refusal with its line.
type fileReader struct {
	name string
	c    *Config
	errs []error
}

func (r *fileReader) fail(n *yaml.Node, path, format string, args ...any) {
	src := r.name
	if n != nil && n.Line > 0 {
		src = r.name + ":" + strconv.Itoa(n.Line)
	}
	r.errs = append(r.errs, &Error{Source: src, Path: path, Reason: fmt.Sprintf(format, args...)})
	if path != "" {
		r.c.markBad(path)
	}
}

func (r *fileReader) src(n *yaml.Node) string { return r.name + ":" + strconv.Itoa(n.Line) }

// applyFile reads the YAML data of file name into c and returns the refusals. Keys absent from the file keep
// their current values.
func (c *Config) applyFile(name string, data []byte) []error {
	r := &fileReader{name: name, c: c}
	if len(data) > maxFileBytes {
		r.fail(nil, "", "config file larger than %d bytes", maxFileBytes)
		return r.errs
	}
	root, err := yamlnode.Decode(data)
	if err != nil {
		r.decodeError(err)
		return r.errs
	}
	root = resolve(root)
	if isNull(root) {
		return nil // an empty file: all defaults
	}
	if root.Kind != yaml.MappingNode {
		r.fail(root, "", "the top level must be a mapping of keys")
		return r.errs
	}
	r.mapping(root, "")
	return r.errs
}

// decodeError turns a file that is not one YAML document into "file:line: reason".
func (r *fileReader) decodeError(err error) {
	var ye *yamlnode.Error
	if !errors.As(err, &ye) {
		r.errs = append(r.errs, &Error{Source: r.name, Reason: "bad YAML: " + err.Error()})
		return
	}
	src := r.name
	if ye.Line > 0 {
		src += ":" + strconv.Itoa(ye.Line)
	}
	reason := "bad YAML: " + ye.Reason
	if ye.Second {
		reason = "a config file holds one YAML document"
	}
	r.errs = append(r.errs, &Error{Source: src, Reason: reason})
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	n, _ = yamlnode.Resolve(n)
	return n
}

func isNull(n *yaml.Node) bool { return yamlnode.IsNull(n) }

// pairs returns the key/value pairs of a mapping, values resolved, refusing non-scalar, merge and duplicate
// keys.
func (r *fileReader) pairs(m *yaml.Node, prefix string) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	all, _ := yamlnode.Pairs(m, yamlnode.ResolveAny)
	for _, p := range all {
		switch p.Problem {
		case yamlnode.NotPlain:
			r.fail(p.Raw, prefix, "keys must be plain names")
		case yamlnode.Merge:
			r.fail(p.Key, prefix, "merge keys (<<) are not supported")
		case yamlnode.Duplicate:
			r.fail(p.Key, join(prefix, p.Key.Value), "duplicate key")
		default:
			out = append(out, [2]*yaml.Node{p.Key, resolve(p.Value)})
		}
	}
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// mapping reads the keys of the top level or of a section.
func (r *fileReader) mapping(m *yaml.Node, prefix string) {
	for _, kv := range r.pairs(m, prefix) {
		k, v := kv[0], kv[1]
		path := join(prefix, k.Value)
		switch {
		case settingByPath[path] != nil:
			r.scalar(settingByPath[path], k, v)
		case sections[path]:
			if isNull(v) {
				continue
			}
			if v.Kind != yaml.MappingNode {
				r.fail(v, path, "must be a mapping of keys")
				continue
			}
			r.mapping(v, path)
		case path == pathPolicies:
			r.policies(v)
		case path == pathOverrides:
			r.overrides(v)
		default:
			r.fail(k, path, "unknown key%s", r.suggest(prefix, k.Value))
		}
	}
}

// scalar reads one setting. A list setting takes a YAML sequence of strings (or one comma-separated string).
func (r *fileReader) scalar(s *setting, k, v *yaml.Node) {
	if list, ok := s.field(r.c).(*[]string); ok {
		switch {
		case isNull(v):
			*list = nil
		case v.Kind == yaml.SequenceNode:
			var vals []string
			for _, item := range v.Content {
				item = resolve(item)
				if item == nil || item.Kind != yaml.ScalarNode || isNull(item) {
					r.fail(item, s.path, "must be a list of strings")
					return
				}
				if t := strings.TrimSpace(item.Value); t != "" {
					vals = append(vals, t)
				}
			}
			*list = vals
		case v.Kind == yaml.ScalarNode:
			*list = splitList(v.Value)
		default:
			r.fail(v, s.path, "must be a list of strings")
			return
		}
		r.c.setSource(s.path, r.src(v))
		return
	}
	if v.Kind != yaml.ScalarNode {
		r.fail(v, s.path, "must be a %s, not %s", s.kindName(), yamlnode.KindName(v))
		return
	}
	if isNull(v) {
		if _, ok := s.field(r.c).(*string); !ok {
			r.fail(v, s.path, "missing value (a %s)", s.kindName())
			return
		}
		v = &yaml.Node{Kind: yaml.ScalarNode, Value: "", Line: v.Line}
	}
	if err := s.set(r.c, v.Value); err != nil {
		r.fail(v, s.path, "%v", err)
		return
	}
	r.c.setSource(s.path, r.src(v))
}

// suggest names a known key close to a misspelt one.
func (r *fileReader) suggest(prefix, key string) string {
	var known []string
	for _, s := range settings {
		if p, ok := strings.CutPrefix(s.path, prefix); ok && (prefix == "" || strings.HasPrefix(p, ".")) {
			p = strings.TrimPrefix(p, ".")
			if i := strings.IndexByte(p, '.'); i >= 0 {
				p = p[:i]
			}
			known = append(known, p)
		}
	}
	if prefix == "ratelimit" {
		known = append(known, "policies", "overrides")
	}
	return suggestFrom(key, known)
}

func suggestFrom(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance of two short keys (long ones are not compared).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
