package core

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Canonical validates a value written for field f (in a record body or an account file) and returns the
// canonical stored form of its type (see the FieldType constants). An empty value is returned as "" and is
// always valid here; whether a required field may be empty is the caller's rule. isUser reports whether an
// id is a user of the account (for user picklists). Errors are *ValidationError naming the field.
func Canonical(f Field, raw string, isUser func(id int64) bool) (string, error) {
	name := f.Name()
	v := raw
	if !keepsSpace(f.Type) {
		v = strings.TrimSpace(raw)
	}
	if v == "" {
		return "", nil
	}
	if f.MaxSize > 0 && utf8.RuneCountInString(v) > f.MaxSize {
		return "", Invalid(name, "longer than max_size "+strconv.Itoa(f.MaxSize))
	}
	switch f.Type {
	case TypeInteger:
		return canonicalInteger(name, v)
	case TypeNumber:
		return canonicalNumber(name, v)
	case TypePickOne:
		return pickOne(f, v, isUser)
	case TypePickMultiple:
		return pickMultiple(f, v, isUser)
	case TypeDate:
		return canonicalDate(name, v)
	case TypeCheckbox:
		return canonicalCheckbox(name, v)
	case TypeEmail:
		return canonicalEmail(name, v)
	case TypeURL:
		return canonicalURL(name, v)
	}
	return v, nil // Textbox, Textarea, Text
}

// keepsSpace reports whether a value of type t keeps its leading and trailing white space: the text types.
func keepsSpace(t FieldType) bool {
	return t == TypeTextarea || t == TypeTextbox || t == TypeText
}

// canonicalInteger is the canonical form of an Integer value: decimal, without sign or leading zeros.
func canonicalInteger(name, v string) (string, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return "", Invalid(name, "not an integer: "+quote(v))
	}
	return itoa(n), nil
}

// canonicalDate is the canonical form of a Date value: YYYY-MM-DD.
func canonicalDate(name, v string) (string, error) {
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return "", Invalid(name, "not a date (YYYY-MM-DD): "+quote(v))
	}
	return t.Format("2006-01-02"), nil
}

// canonicalCheckbox is the canonical form of a Checkbox value: 0 or 1.
func canonicalCheckbox(name, v string) (string, error) {
	switch strings.ToLower(v) {
	case "0", "false", "unchecked":
		return "0", nil
	case "1", "true", "checked":
		return "1", nil
	}
	return "", Invalid(name, "not a checkbox value (0 or 1): "+quote(v))
}

// canonicalNumber is the canonical form of a Number value: a decimal number, an optional sign, digits and an
// optional fraction of digits (-12.50), kept as written but for a leading '+'. strconv.ParseFloat alone would
// also take NaN, Inf, hexadecimal (0x1p4), underscores (1_0), exponents (1e3), and .5 or 5.: none of them is
// a decimal as the interface writes it, and clients that parse the stored text need not cope with them.
func canonicalNumber(name, v string) (string, error) {
	if !isDecimal(v) {
		return "", Invalid(name, "not a decimal number (digits, an optional sign and fraction: -12.50): "+quote(v))
	}
	if _, err := strconv.ParseFloat(v, 64); err != nil {
		return "", Invalid(name, "number out of range: "+quote(v))
	}
	return strings.TrimPrefix(v, "+"), nil
}

// isDecimal reports whether v is [+-]digits[.digits].
func isDecimal(v string) bool {
	if v != "" && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	whole, frac, hasFrac := strings.Cut(v, ".")
	return allDigits(whole) && (!hasFrac || allDigits(frac))
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// canonicalEmail is the canonical form of an Email value: the address as written. It must have a local part,
// an '@' and a domain, and no white space: a@ or @b is no address a client could write to.
func canonicalEmail(name, v string) (string, error) {
	at := strings.LastIndexByte(v, '@')
	if at <= 0 || at == len(v)-1 ||
		strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "", Invalid(name, "not an email address (local part, @, domain): "+quote(v))
	}
	return v, nil
}

// canonicalURL is the canonical form of a URL value: the URL as written.
func canonicalURL(name, v string) (string, error) {
	if problem := urlProblem(v); problem != "" {
		return "", Invalid(name, "not an absolute http or https URL ("+problem+"): "+quote(v))
	}
	return v, nil
}

// pickOne is the canonical form of a PickOne value: the id pick accepts.
func pickOne(f Field, v string, isUser func(id int64) bool) (string, error) {
	n, err := pick(f, v, isUser)
	if err != nil {
		return "", err
	}
	return itoa(n), nil
}

// pickMultiple is the canonical form of a PickMultiple value: the ids of a comma-separated list, each
// checked by pick, without duplicates, sorted and joined by commas. An empty item (1,,3 or ,1) is refused:
// it is a list written wrong, whose meaning the core should not guess.
func pickMultiple(f Field, v string, isUser func(id int64) bool) (string, error) {
	var ids []int64
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return "", Invalid(f.Name(), "empty item in the list of values: "+quote(v))
		}
		n, err := pick(f, part, isUser)
		if err != nil {
			return "", err
		}
		if !slices.Contains(ids, n) {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, n := range ids {
		parts[i] = itoa(n)
	}
	return strings.Join(parts, ","), nil
}

// DefaultValue is the value field f gets when a new record leaves it out: its default_value, or else, for a
// picklist, its default options (the first one of a single picklist). A default that does not validate (an
// option or user removed since) is no default: "".
func DefaultValue(f Field, isUser func(id int64) bool) string {
	raw := f.DefaultValue
	if raw == "" && f.IsPicklist() {
		var ids []string
		for _, o := range f.Options {
			if o.Default {
				ids = append(ids, itoa(o.Value))
				if f.Type == TypePickOne {
					break
				}
			}
		}
		raw = strings.Join(ids, ",")
	}
	if raw == "" {
		return ""
	}
	v, err := Canonical(f, raw, isUser)
	if err != nil {
		return ""
	}
	return v
}

// AddDefaults completes the values of a new record, the one rule of records created through the interface
// and seeded from account files: a required field of fields that values leaves out is an error naming it,
// and every other field left out gets its DefaultValue. A field present in values, even empty, keeps its
// value. isUser is as for Canonical.
func AddDefaults(fields []Field, values map[int64]string, isUser func(id int64) bool) error {
	for _, f := range fields {
		if _, ok := values[f.ID]; ok {
			continue
		}
		if f.Required {
			return Invalid(f.Name(), "is required")
		}
		if d := DefaultValue(f, isUser); d != "" {
			values[f.ID] = d
		}
	}
	return nil
}

// urlProblem says what keeps v from being an absolute http or https URL, the links a URL field is for (a
// client shows them as links, so another scheme, javascript: above all, has no place there); "" when
// nothing does.
func urlProblem(v string) string {
	if strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "it contains white space"
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return "it does not parse"
	case u.Scheme == "":
		return "no scheme; write it as https://..."
	case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
		return "the scheme is " + u.Scheme
	case u.Opaque != "" || u.Hostname() == "":
		return "no host"
	}
	return ""
}

// pick checks one picklist value: an option value, or a user id for user picklists.
func pick(f Field, v string, isUser func(id int64) bool) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, Invalid(f.Name(), "not an integer: "+quote(v))
	}
	if f.ListType == ListUser {
		if isUser == nil || !isUser(n) {
			return 0, Invalid(f.Name(), "not a user of the account: "+v)
		}
		return n, nil
	}
	for _, o := range f.Options {
		if o.Value == n {
			return n, nil
		}
	}
	return 0, Invalid(f.Name(), "not a valid option: "+v)
}

// Option returns the option of a picklist with value n.
func (f Field) Option(n int64) (Option, bool) {
	for _, o := range f.Options {
		if o.Value == n {
			return o, true
		}
	}
	return Option{}, false
}

// SplitIDs splits a canonical multiple-picklist value ("1,3") into its ids; it skips anything malformed.
func SplitIDs(v string) []int64 {
	var ids []int64
	for part := range strings.SplitSeq(v, ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64); err == nil {
			ids = append(ids, n)
		}
	}
	return ids
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}
