package config

import "strings"

// Error is one refused setting: where it came from, the key path and the reason. Load and Validate return every
// refusal they find, joined with errors.Join, so an operator fixes a file in one pass.
type Error struct {
	Source string // "flag --listen", "env REQGATE_CACHE_TTL", "reqgate.yaml:12"; empty for a default
	Path   string // "ratelimit.policies[0].burst"; empty for a whole-file problem
	Reason string // "must be >= 1"
}

// Error reads "source: path: reason", leaving out the parts that are empty.
func (e *Error) Error() string {
	parts := make([]string, 0, 3)
	for _, s := range []string{e.Source, e.Path, e.Reason} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}
