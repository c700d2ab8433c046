package core

import (
	"strconv"
	"strings"
)

// The stores index field values for search by terms: per record and searchable field, the terms a condition
// field_<n>=<value> matches. A picklist gives each selected option (user picklists included); a Textbox gives
// its lower-cased value when it is alphanumeric (search values are alphanumeric only, so nothing else can
// match). Textbox search is therefore exact but case-insensitive. Both stores use these rules, so they agree.

// Searchable reports whether fields of type t are indexed for search.
func Searchable(t FieldType) bool {
	return t == TypePickOne || t == TypePickMultiple || t == TypeTextbox
}

// SearchTerms returns the index terms of one canonical stored value of a field of type t.
func SearchTerms(t FieldType, value string) []string {
	if value == "" {
		return nil
	}
	switch t {
	case TypePickOne:
		return []string{value}
	case TypePickMultiple:
		ids := SplitIDs(value)
		out := make([]string, len(ids))
		for i, n := range ids {
			out[i] = strconv.FormatInt(n, 10)
		}
		return out
	case TypeTextbox:
		if !alphanumeric(value) {
			return nil
		}
		return []string{strings.ToLower(value)}
	}
	return nil
}

// SearchTerm is the term a checked field condition on a field of type t looks up.
func SearchTerm(t FieldType, c Condition) string {
	if t == TypeTextbox {
		return strings.ToLower(c.Value)
	}
	return strconv.FormatInt(c.Int, 10)
}
