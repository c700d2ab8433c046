package core

import "strings"

// ParseSearchQuery reads the query string of a search: conditions written raw (ParseConditions), and
// conditions given each as the value of a q parameter (q=created_time%3E1262493473&q=field_103%3D1).
//
// The q form exists because a client generated from an OpenAPI document can only send name=value
// parameters: it cannot write created_time>1262493473 without an '=', and for a parameter named
// "created_time>" it sends created_time>=1262493473, another operator. A q value is one condition of the
// language, percent-decoded once like a raw one; a '&' in it (sent as %26) is part of that condition, so it
// is refused with the condition quoted, never read as a second one. An empty q is refused too.
func ParseSearchQuery(raw string) ([]Condition, error) {
	var conds []Condition
	for part := range strings.SplitSeq(raw, "&") {
		cond, isQ := strings.CutPrefix(part, "q=")
		if isQ && cond == "" {
			return nil, Invalid("q=", "a q parameter holds one condition; this one is empty")
		}
		if !isQ {
			cond = part
		}
		cs, err := ParseConditions(cond)
		if err != nil {
			return nil, err
		}
		conds = append(conds, cs...)
	}
	return conds, nil
}
