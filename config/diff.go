package config

import "reflect"

// Changed returns the key paths whose values differ between a and b, in Print order: every key of the
// settings table, then ratelimit.policies and ratelimit.overrides as wholes. A reload uses it to tell what
// can be applied to a running process from what needs a restart.
func Changed(a, b *Config) []string {
	var out []string
	for _, s := range settings {
		if s.format(a) != s.format(b) {
			out = append(out, s.path)
		}
	}
	if !reflect.DeepEqual(a.RateLimit.Policies, b.RateLimit.Policies) {
		out = append(out, pathPolicies)
	}
	if !reflect.DeepEqual(a.RateLimit.Overrides, b.RateLimit.Overrides) {
		out = append(out, pathOverrides)
	}
	return out
}
