package core

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The stores index field values for search by terms: per record and searchable field, the terms a condition
// field_<n>=<value> matches. A picklist gives each selected option (user picklists included); a Textbox gives
// its folded value (FoldWord) when it is a word, letters and digits of any script (search values are words,
// so nothing else can match). Textbox search is therefore exact but ignores case. Both stores use these
// rules, so they agree.

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
		if !IsWord(value) {
			return nil
		}
		return []string{FoldWord(value)}
	}
	return nil
}

// SearchTerm is the term a checked field condition on a field of type t looks up.
func SearchTerm(t FieldType, c Condition) string {
	if t == TypeTextbox {
		return FoldWord(c.Value)
	}
	return strconv.FormatInt(c.Int, 10)
}

// IsWord reports whether s is a word a Textbox search takes: valid UTF-8, letters and digits of any script
// and the marks that combine with them (the accents of a decomposed é, the vowel signs of Devanagari), not
// starting with a mark. White space, punctuation and symbols are not part of a word.
func IsWord(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r):
		case unicode.IsMark(r) && i > 0:
		default:
			return false
		}
	}
	return true
}

// FoldWord is the form of a word that Textbox search compares: its Unicode case folding in composed form
// (NFC), so that Été, ÉTÉ and été, Straße and STRASSE, and a decomposed é and a composed one are one term. For
// ASCII it is the lower case, as the terms of ASCII words have always been stored.
func FoldWord(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return norm.NFC.String(cases.Fold().String(norm.NFD.String(s)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
