package config

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// itemField is one key of a policy or override item.
type itemField struct {
	name string
	set  func(raw string) error
}

// policies reads ratelimit.policies: a list of {name, key, limit, period, burst, max_delay, algorithm, block}.
// An absent burst defaults to the limit, an absent algorithm to gcra.
func (r *fileReader) policies(v *yaml.Node) {
	r.c.RateLimit.Policies = nil
	r.c.setSource(pathPolicies, r.src(v))
	items, ok := r.list(v, pathPolicies, maxPolicies)
	if !ok {
		return
	}
	for i, item := range items {
		var p Policy
		prefix := fmt.Sprintf("%s[%d]", pathPolicies, i)
		seen := r.item(item, prefix, []itemField{
			{"name", func(s string) error { p.Name = s; return nil }},
			{"key", func(s string) error { p.Key = s; return nil }},
			{"limit", intInto(&p.Limit)},
			{"period", durationInto(&p.Period)},
			{"burst", intInto(&p.Burst)},
			{"max_delay", durationInto(&p.MaxDelay)},
			{"algorithm", func(s string) error { p.Algorithm = s; return nil }},
			{"block", durationInto(&p.Block)},
		})
		if !seen["algorithm"] {
			p.Algorithm = AlgorithmGCRA
		}
		if !seen["burst"] {
			p.Burst = p.Limit
			if r.c.bad[prefix+".limit"] {
				r.c.markBad(prefix + ".burst") // the default follows a refused limit
			}
		}
		r.c.RateLimit.Policies = append(r.c.RateLimit.Policies, p)
	}
}

// overrides reads ratelimit.overrides: a list of {api_key, policy, limit, period, burst}. An absent burst
// defaults to the limit.
func (r *fileReader) overrides(v *yaml.Node) {
	r.c.RateLimit.Overrides = nil
	r.c.setSource(pathOverrides, r.src(v))
	items, ok := r.list(v, pathOverrides, maxOverrides)
	if !ok {
		return
	}
	for i, item := range items {
		var o Override
		prefix := fmt.Sprintf("%s[%d]", pathOverrides, i)
		seen := r.item(item, prefix, []itemField{
			{"api_key", func(s string) error { o.APIKey = s; return nil }},
			{"policy", func(s string) error { o.Policy = s; return nil }},
			{"limit", intInto(&o.Limit)},
			{"period", durationInto(&o.Period)},
			{"burst", intInto(&o.Burst)},
		})
		if !seen["burst"] {
			o.Burst = o.Limit
			if r.c.bad[prefix+".limit"] {
				r.c.markBad(prefix + ".burst") // the default follows a refused limit
			}
		}
		r.c.RateLimit.Overrides = append(r.c.RateLimit.Overrides, o)
	}
}

func intInto(dst *int) func(string) error {
	return func(s string) error {
		n, err := parseInt(s)
		*dst = n
		return err
	}
}

func durationInto(dst *time.Duration) func(string) error {
	return func(s string) error {
		d, err := parseDuration(s)
		*dst = d
		return err
	}
}

// list checks that v is a sequence (null counts as empty) of at most max items.
func (r *fileReader) list(v *yaml.Node, path string, max int) ([]*yaml.Node, bool) {
	if isNull(v) {
		return nil, false
	}
	if v.Kind != yaml.SequenceNode {
		r.fail(v, path, "must be a list")
		return nil, false
	}
	if len(v.Content) > max {
		r.fail(v, path, "more than %d entries", max)
		return nil, false
	}
	return v.Content, true
}

// item reads one mapping of a list, refusing unknown keys and non-scalar values; it returns the keys seen.
// Every key's line is recorded as its source, so Validate names the line of a bad value.
func (r *fileReader) item(n *yaml.Node, prefix string, fields []itemField) map[string]bool {
	seen := map[string]bool{}
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		r.fail(n, prefix, "must be a mapping of keys")
		return seen
	}
	r.c.setSource(prefix, r.src(n))
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	for _, kv := range r.pairs(n, prefix) {
		k, v := kv[0], kv[1]
		path := prefix + "." + k.Value
		var f *itemField
		for i := range fields {
			if fields[i].name == k.Value {
				f = &fields[i]
			}
		}
		if f == nil {
			r.fail(k, path, "unknown key%s", suggestFrom(k.Value, names))
			continue
		}
		seen[k.Value] = true
		if v.Kind != yaml.ScalarNode || isNull(v) {
			r.fail(v, path, "must be a single value")
			continue
		}
		if err := f.set(v.Value); err != nil {
			r.fail(v, path, "%v", err)
			continue
		}
		r.c.setSource(path, r.src(v))
	}
	return seen
}
