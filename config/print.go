package config

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// masked stands in for a password in printed URLs.
const masked = "xxxxx"

// Print writes the effective configuration as a YAML config file, with passwords inside the Redis, PostgreSQL
// and upstream URLs masked. A value that is not a default carries a comment naming its source.
func (c *Config) Print(w io.Writer) error {
	root := &yaml.Node{Kind: yaml.MappingNode}
	sectionNodes := map[string]*yaml.Node{}
	for _, s := range settings {
		parent, key := root, s.path
		for i := strings.IndexByte(key, '.'); i > 0; i = strings.IndexByte(key, '.') {
			sec := s.path[:len(s.path)-len(key)+i] // "redis", then "redis.sentinel"
			if sectionNodes[sec] == nil {
				sectionNodes[sec] = &yaml.Node{Kind: yaml.MappingNode}
				parent.Content = append(parent.Content, scalarNode(key[:i]), sectionNodes[sec])
			}
			parent, key = sectionNodes[sec], key[i+1:]
		}
		val := c.valueNode(s)
		if src, ok := c.sources[s.path]; ok {
			val.LineComment = "from " + src
		}
		parent.Content = append(parent.Content, scalarNode(key), val)
	}
	rl := sectionNodes["ratelimit"]
	for _, l := range []struct {
		key  string
		path string
		node *yaml.Node
	}{{"policies", pathPolicies, c.policiesNode()}, {"overrides", pathOverrides, c.overridesNode()}} {
		k := scalarNode(l.key)
		if src, ok := c.sources[l.path]; ok {
			k.LineComment = "from " + src
		}
		rl.Content = append(rl.Content, k, l.node)
	}

	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root},
		HeadComment: fmt.Sprintf("reqgate %s: effective configuration (passwords masked)", c.Role)}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("print config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("print config: %w", err)
	}
	return nil
}

func scalarNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// valueNode renders one setting: lists as flow sequences, numbers and booleans untagged, strings quoted when
// YAML would read them otherwise.
func (c *Config) valueNode(s *setting) *yaml.Node {
	switch p := s.field(c).(type) {
	case *[]string:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, v := range *p {
			n.Content = append(n.Content, scalarNode(v))
		}
		return n
	case *int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(*p)}
	case *bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(*p)}
	}
	v := s.format(c)
	if s.secret {
		v = mask(v)
	}
	return scalarNode(v)
}

func (c *Config) policiesNode() *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode}
	if len(c.RateLimit.Policies) == 0 {
		n.Style = yaml.FlowStyle
	}
	for _, p := range c.RateLimit.Policies {
		n.Content = append(n.Content, mappingNode(
			"name", scalarNode(p.Name),
			"key", scalarNode(p.Key),
			"limit", intNode(p.Limit),
			"period", scalarNode(formatDuration(p.Period)),
			"burst", intNode(p.Burst),
			"max_delay", scalarNode(formatDuration(p.MaxDelay)),
			"algorithm", scalarNode(p.Algorithm),
			"block", scalarNode(formatDuration(p.Block)),
		))
	}
	return n
}

func (c *Config) overridesNode() *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode}
	if len(c.RateLimit.Overrides) == 0 {
		n.Style = yaml.FlowStyle
	}
	for _, o := range c.RateLimit.Overrides {
		n.Content = append(n.Content, mappingNode(
			"api_key", scalarNode(o.APIKey),
			"policy", scalarNode(o.Policy),
			"limit", intNode(o.Limit),
			"period", scalarNode(formatDuration(o.Period)),
			"burst", intNode(o.Burst),
		))
	}
	return n
}

func intNode(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

func mappingNode(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, scalarNode(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}

var passwordParam = regexp.MustCompile(`(?i)(password=)[^&\s]*`)

// mask hides passwords in a URL or a comma-separated list of URLs: the userinfo password and any password=
// parameter. A URL that does not parse loses everything between "://" and its last "@".
func mask(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = maskOne(p)
	}
	return strings.Join(parts, ",")
}

func maskOne(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		if i := strings.Index(s, "://"); i >= 0 {
			if j := strings.LastIndex(s, "@"); j > i {
				s = s[:i+3] + masked + s[j:]
			}
		}
		return passwordParam.ReplaceAllString(s, "${1}"+masked)
	}
	changed := false
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), masked)
			changed = true
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if strings.Contains(strings.ToLower(k), "password") {
				q.Set(k, masked)
				changed = true
			}
		}
		u.RawQuery = q.Encode()
	}
	if !changed {
		// Nothing to hide (a SQLite path, a URL without password): keep it exactly as given, but catch a
		// password= the parser did not see as a query parameter.
		return passwordParam.ReplaceAllString(s, "${1}"+masked)
	}
	return u.String()
}
