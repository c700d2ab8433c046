package core

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// System attributes a search condition may name.
var (
	timeAttrs = map[string]bool{"created_time": true, "last_updated_time": true, "deleted_time": true}
	userAttrs = map[string]bool{"created_by": true, "last_updated_by": true}
)

// ParseConditions reads the search-condition language (docs/api.md, The search condition language):
// conditions written raw in a query string (created_time>1262493473&field_103=1), joined by '&', with the
// operator raw or percent-encoded. It checks only the syntax; CheckConditions checks them against the kind's
// fields.
func ParseConditions(raw string) ([]Condition, error) {
	var conds []Condition
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		text, err := url.PathUnescape(part)
		if err != nil {
			return nil, Invalid(part, "malformed percent-encoding")
		}
		attr, op, value, ok := splitCondition(text)
		if !ok {
			return nil, Invalid(text, "not a condition (attribute, then <, > or =, then a value)")
		}
		if len(op) != 1 || op == "!" || op == "~" {
			return nil, Invalid(text, "the operator "+op+" is not supported; "+operators(attr))
		}
		c := Condition{Attr: attr, Op: op[0], Value: value}
		if c.Value == "" {
			return nil, Invalid(text, "condition has no value")
		}
		conds = append(conds, c)
	}
	return conds, nil
}

// opChars are the characters an operator is written with. The language has only <, > and =; the others are
// read too, so that a caller who writes >=, != or <> is told that the operator is the problem.
const opChars = "<>=!~"

// splitCondition splits attribute, operator (the whole run of operator characters) and value; ok is false
// when there is no operator or nothing before it.
func splitCondition(text string) (attr, op, value string, ok bool) {
	i := strings.IndexAny(text, opChars)
	if i <= 0 {
		return "", "", "", false
	}
	j := i
	for j < len(text) && strings.IndexByte(opChars, text[j]) >= 0 {
		j++
	}
	return strings.TrimSpace(text[:i]), text[i:j], strings.TrimSpace(text[j:]), true
}

// operators says which operators a condition on attr takes, for messages.
func operators(attr string) string {
	switch {
	case timeAttrs[attr]:
		return attr + " takes < or >"
	case userAttrs[attr], strings.HasPrefix(attr, "field_"):
		return attr + " takes ="
	}
	return "conditions take <, > or ="
}

// String writes the condition back in the condition language.
func (c Condition) String() string { return c.Attr + string(c.Op) + c.Value }

// CheckConditions validates conditions against the fields of their kind and fills Int, FieldID and Multi.
// Times take < or > and a 10-digit UNIX timestamp; created_by and last_updated_by take = and an integer user id;
// field_<n> takes = on a Picklist field (an integer option value or user id) or a Textbox field (a word,
// see IsWord). Anything else is a *ValidationError naming the condition.
func CheckConditions(conds []Condition, fields []Field) error {
	for i := range conds {
		c := &conds[i]
		var err error
		switch {
		case timeAttrs[c.Attr]:
			err = checkTimeCondition(c)
		case userAttrs[c.Attr]:
			err = checkUserCondition(c)
		case strings.HasPrefix(c.Attr, "field_"):
			err = checkFieldCondition(c, fields)
		default:
			err = Invalid(c.String(), "unknown search attribute "+c.Attr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTimeCondition checks a condition on a time (< or > and a UNIX timestamp of 10 digits, as the interface
// defines it: no sign, no leading zero, no other length; 1000000000 to 9999999999, 2001 to 2286) and fills
// Int.
func checkTimeCondition(c *Condition) error {
	if c.Op == '=' {
		return Invalid(c.String(), "the operator = is not supported; "+operators(c.Attr))
	}
	if len(c.Value) != 10 || !allDigits(c.Value) || c.Value[0] == '0' {
		return Invalid(c.String(), "time is not a 10-digit UNIX timestamp (seconds, GMT)")
	}
	n, err := strconv.ParseInt(c.Value, 10, 64)
	if err != nil {
		return Invalid(c.String(), "time is not a 10-digit UNIX timestamp (seconds, GMT)")
	}
	c.Int = n
	return nil
}

// checkUserCondition checks a condition on a user (= and a user id) and fills Int.
func checkUserCondition(c *Condition) error {
	if c.Op != '=' {
		return Invalid(c.String(), "the operator "+string(c.Op)+" is not supported; "+operators(c.Attr))
	}
	n, err := strconv.ParseInt(c.Value, 10, 64)
	if err != nil {
		return Invalid(c.String(), "user id is not an integer")
	}
	c.Int = n
	return nil
}

// checkFieldCondition checks a condition field_<n> (= on a Picklist or Textbox field of fields) and fills
// FieldID, and for a Picklist Int and Multi.
func checkFieldCondition(c *Condition, fields []Field) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(c.Attr, "field_"), 10, 64)
	if err != nil {
		return Invalid(c.String(), "unknown field "+c.Attr)
	}
	i := slices.IndexFunc(fields, func(f Field) bool { return f.ID == id })
	if i < 0 {
		return Invalid(c.String(), "unknown field "+c.Attr)
	}
	f := &fields[i]
	if c.Op != '=' {
		return Invalid(c.String(), "the operator "+string(c.Op)+" is not supported; "+operators(c.Attr))
	}
	c.FieldID = id
	switch {
	case f.IsPicklist():
		n, err := strconv.ParseInt(c.Value, 10, 64)
		if err != nil {
			return Invalid(c.String(), "picklist value is not an integer")
		}
		c.Int = n
		c.Multi = f.Type == TypePickMultiple
	case f.Type == TypeTextbox:
		if !IsWord(c.Value) {
			return Invalid(c.String(), "a Textbox search value is one word: letters and digits of any script, "+
				"no spaces or punctuation")
		}
	default:
		return Invalid(c.String(), "search supports only Picklist and Textbox fields, not "+string(f.Type))
	}
	return nil
}

// CheckSearch is what a store checks of conditions before it runs them, against the searchable fields of the
// kind as the store holds them now (field id -> type; their definitions may have changed since the caller ran
// CheckConditions): times take < or >, users take =, and a field condition takes = on a searchable field of the
// kind, found by FieldID (field_0103 names field 103 too). Anything else is a *ValidationError.
func CheckSearch(kind string, conds []Condition, searchable map[int64]FieldType) error {
	for _, c := range conds {
		switch {
		case timeAttrs[c.Attr]:
			if c.Op != '<' && c.Op != '>' {
				return Invalid(c.String(), "time conditions take < or >")
			}
		case userAttrs[c.Attr]:
			if c.Op != '=' {
				return Invalid(c.String(), c.Attr+" takes =")
			}
		default:
			t, ok := searchable[c.FieldID]
			if !ok || !Searchable(t) || c.Op != '=' {
				return Invalid(c.String(), "not a searchable field of "+kind)
			}
		}
	}
	return nil
}
