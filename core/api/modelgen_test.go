package api_test

// What TestModel (model_test.go) sends: the choice of kind, record and version path, and values and search
// conditions of every shape the manual accepts, with now and then one it refuses.

import (
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/reqgate/reqgate/core"
)

// ---- choices ----

func (r *run) chance(percent int) bool { return r.rng.Intn(100) < percent }

func pick[T any](r *run, xs []T) T { return xs[r.rng.Intn(len(xs))] }

// pickKind chooses a kind, requirements most often: they have a field of every type.
func (r *run) pickKind() *mKind {
	n := r.rng.Intn(100)
	switch {
	case n < 50:
		return r.kinds[0] // re
	case n < 65:
		return r.kinds[1] // ft
	case n < 72:
		return r.kinds[2] // uc
	}
	return r.kinds[3] // risk
}

// pickVersion chooses the version path of a request on kind k. A custom object exists in version 2 only;
// its ops on version 1 are sent now and then and must be 404.
func (r *run) pickVersion(k *mKind) string {
	if k.custom {
		if r.chance(4) {
			return pick(r, []string{"/api", "/api1"})
		}
		return "/api2"
	}
	return pick(r, []string{"/api", "/api1", "/api2", "/api2"})
}

// v2Path is the version path of a version-2-only endpoint (views, search, field history): /api2, and now and
// then version 1, where such paths must be 404.
func (r *run) v2Path() string {
	if r.chance(3) {
		return pick(r, []string{"/api", "/api1"})
	}
	return "/api2"
}

func versionOf(path string) int {
	if path == "/api2" {
		return 2
	}
	return 1
}

// target is the record an operation addresses: a model record, or an id the core never gave, or a record's
// id written with a leading zero (which names nothing: rec is nil).
type target struct {
	rec  *mRecord
	id   int64
	zero bool
}

func (t target) live() bool { return t.rec != nil && t.rec.deleted == 0 }

// missing says why a target that is not live is 404.
func (t target) missing() string {
	switch {
	case t.zero:
		return "an id with a leading zero names no record"
	case t.rec == nil:
		return "the record was never created"
	}
	return "the record is deleted"
}

// pickTarget chooses a record of k: mostly a live one, the newest ones more often (so that some records
// collect long histories), sometimes a deleted one, an id that was never given or a record's id with a
// leading zero.
func (r *run) pickTarget(k *mKind, livePercent int) target {
	if len(k.recs) > 0 && r.chance(3) {
		return target{id: pick(r, k.recs).id, zero: true}
	}
	var live, deleted []*mRecord
	for _, rec := range k.recs {
		if rec.deleted == 0 {
			live = append(live, rec)
		} else {
			deleted = append(deleted, rec)
		}
	}
	switch {
	case len(live) > 0 && r.chance(livePercent):
		if len(live) > 8 && r.chance(50) {
			live = live[len(live)-8:]
		}
		rec := pick(r, live)
		return target{rec: rec, id: rec.id}
	case len(deleted) > 0 && r.chance(60):
		rec := pick(r, deleted)
		return target{rec: rec, id: rec.id}
	}
	return target{id: k.maxID + 1 + int64(r.rng.Intn(50))}
}

func (r *run) path(ver string, k *mKind, rest ...string) string {
	p := ver + "/" + keyModel + "/" + k.seg
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

func (t target) idText() string {
	if t.zero {
		return "0" + strconv.FormatInt(t.id, 10)
	}
	return strconv.FormatInt(t.id, 10)
}

// ---- values ----

// wval is one value a write sends.
type wval struct {
	elem  string // the <value> element as sent
	raw   string // the value as the core reads it: the text, or the ids of nested <value id=".."> joined by commas
	canon string // the stored form the manual gives it (a version-1 Textarea: its HTML)
	valid bool
	v1    bool // a Textarea value written in version 1 (plain text)
}

var words = []string{"alpha", "Beta", "gamma", "delta7", "EPSILON", "zeta", "42"}

// word is a search-friendly Textbox value: ASCII letters and digits, in a random case.
func (r *run) word() string {
	w := pick(r, words)
	switch r.rng.Intn(3) {
	case 0:
		return strings.ToLower(w)
	case 1:
		return strings.ToUpper(w)
	}
	return w
}

func textElem(r *run, raw string) string {
	if raw == "" {
		return pick(r, []string{"<value />", "<value></value>"})
	}
	if r.chance(15) && !strings.Contains(raw, "]]>") && !strings.ContainsAny(raw, "\t\r") {
		return "<value><![CDATA[" + raw + "]]></value>"
	}
	return "<value>" + escapeText(raw) + "</value>"
}

func escapeText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) //nolint:errcheck // a strings.Builder does not fail
	return b.String()
}

// pad surrounds a value with white space now and then: the manual trims every type but text.
func (r *run) pad(s string) string {
	if r.chance(20) {
		return pick(r, []string{" ", "  ", "\n"}) + s + pick(r, []string{"", " ", "\n "})
	}
	return s
}

// genValue makes a value for field f written in version ver, in any of the shapes the manual accepts, or
// now and then (in an operation that may send them) one it refuses.
func (r *run) genValue(f core.Field, ver int) wval {
	for {
		w := r.genAnyValue(f, ver)
		if w.valid || r.bad {
			return w
		}
	}
}

func (r *run) genAnyValue(f core.Field, ver int) wval {
	plain := func(raw, canon string, valid bool) wval {
		return wval{elem: textElem(r, raw), raw: raw, canon: canon, valid: valid}
	}
	text := f.Type == core.TypeTextbox || f.Type == core.TypeText || f.Type == core.TypeTextarea
	if r.chance(5) && !text {
		return plain("", "", true) // an empty value clears the field
	}
	switch f.Type {
	case core.TypeTextbox, core.TypeText:
		// Text is kept as written, white space included.
		n := r.rng.Intn(100)
		var s string
		switch {
		case n < 45:
			s = r.word()
		case n < 60:
			s = r.word() + " " + r.word()
		case n < 76:
			s = pick(r, []string{" lead", "trail ", "a & b <c>", `say "hi" 'now'`, "line\nbreak", "tab\tin", "]]> end"})
		case n < 84:
			// Words of other scripts, which a Textbox search finds ignoring case; "e\u0301te\u0301" is été
			// with its accents as combining characters, kept as written.
			s = pick(r, []string{"été", "ÉTÉ", "e\u0301te\u0301", "Straße", "STRASSE", "東京", "Ελλάδα", "οδός", "١٢٣", "ＡＢＣ"})
		case n < 90 && f.MaxSize > 0:
			s = strings.Repeat("é", f.MaxSize) // max_size counts characters, not bytes
		case n < 96:
			return plain("", "", !f.Required)
		case f.MaxSize > 0:
			s = strings.Repeat("x", f.MaxSize+1)
			return plain(s, s, false)
		default:
			s = strings.Repeat("long text ", 100)
		}
		return plain(s, s, true)
	case core.TypeNumber:
		if r.chance(25) {
			// Not decimal numbers: an exponent, a missing whole part or fraction, NaN, Inf, hexadecimal, "_",
			// a sign alone, and a number beyond the range of a double.
			return plain(pick(r, []string{"abc", "1,5", "1.2.3", "12e", "--1", "NaN", "nan", "Inf", "-Inf", "+Inf",
				"Infinity", "0x1p4", "0x10", "1_0", "1e3", "0.1e1", "1E-2", ".5", "-.5", "5.", "+", "-", "+-1",
				"1" + strings.Repeat("0", 400)}), "", false)
		}
		if r.chance(5) {
			// Decimal numbers stored as written, however they are written.
			v := pick(r, []string{"12.50", "007", "-0", "0.0", "-0.000"})
			return plain(r.pad(v), v, true)
		}
		v := strconv.Itoa(r.rng.Intn(2000))
		if r.chance(60) {
			frac := strings.TrimRight(fmt.Sprintf("%03d", 1+r.rng.Intn(999)), "0")
			v += "." + frac
		}
		switch n := r.rng.Intn(100); {
		case v != "0" && n < 30:
			v = "-" + v
		case n < 40:
			// A leading + is dropped when stored.
			return plain(r.pad("+"+v), v, true)
		}
		return plain(r.pad(v), v, true)
	case core.TypeEmail:
		if r.chance(30) {
			// No @, nothing before or after it, white space inside.
			return plain(pick(r, []string{"nobody", "example.com", "at.example.org", "@example.com", "a@", "@",
				"a b@example.com", "a@exa mple.com", "a@example.com b"}), "", false)
		}
		v := pick(r, []string{"a@example.com", "first.last@model.test", "x+tag@sub.example.org"})
		return plain(r.pad(v), v, true)
	case core.TypeURL:
		if r.chance(10) {
			return plain(pick(r, []string{"ftp://x.example", "example.com/a", "https://", "javascript:alert(1)", "http://a b.example"}), "", false)
		}
		v := pick(r, []string{"https://example.com/x?y=1&z=2", "http://h.test", "HTTPS://Example.com/A", "https://example.com:8443/p#f"})
		return plain(r.pad(v), v, true)
	case core.TypeInteger:
		n := r.rng.Intn(100)
		switch {
		case n < 70:
			v := strconv.Itoa(r.rng.Intn(221) - 20)
			return plain(r.pad(v), v, true)
		case n < 85:
			v := strconv.FormatInt(r.rng.Int63n(1_000_000_000_000_000), 10)
			return plain(v, v, true)
		default:
			return plain(pick(r, []string{"1.5", "12a", "abc", "1e3", "- 4", "0x10"}), "", false)
		}
	case core.TypeDate:
		if r.chance(12) {
			return plain(pick(r, []string{"2025-02-30", "2025/03/01", "31-12-2025", "2025-13-01", "tomorrow", "2025-1-5"}), "", false)
		}
		d := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.rng.Intn(16000)).Format("2006-01-02")
		return plain(r.pad(d), d, true)
	case core.TypeCheckbox:
		if r.chance(10) {
			return plain(pick(r, []string{"yes", "2", "on", "-1"}), "", false)
		}
		raw := pick(r, []string{"0", "1", "true", "false", "checked", "unchecked"})
		canon := "0"
		if raw == "1" || raw == "true" || raw == "checked" {
			canon = "1"
		}
		return plain(r.pad(raw), canon, true)
	case core.TypePickOne:
		if r.chance(10) {
			return plain(pick(r, []string{"9", "99", "x", "1,2", "0"}), "", false)
		}
		n := pick(r, choices(f))
		v := strconv.FormatInt(n, 10)
		if r.chance(30) {
			return wval{elem: choiceElem(f, n, "value"), raw: v, canon: v, valid: true} // the shape of a read
		}
		return plain(r.pad(v), v, true)
	case core.TypePickMultiple:
		cs := choices(f)
		var ids []int64
		for range r.rng.Intn(4) {
			ids = append(ids, pick(r, cs))
		}
		valid := true
		if r.chance(8) {
			ids = append(ids, 99)
			valid = false
		}
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
		canon := joinIDs(sorted)
		if r.chance(35) {
			var b strings.Builder
			b.WriteString("<value>")
			raw := make([]string, len(ids))
			for i, n := range ids {
				b.WriteString(choiceElem(f, n, "value"))
				raw[i] = strconv.FormatInt(n, 10)
			}
			b.WriteString("</value>")
			return wval{elem: b.String(), raw: strings.Join(raw, ","), canon: canon, valid: valid}
		}
		parts := make([]string, len(ids))
		for i, n := range ids {
			parts[i] = strconv.FormatInt(n, 10)
		}
		raw := strings.Join(parts, pick(r, []string{",", ", "}))
		if r.chance(6) {
			// An empty item: 1,,3 or ,1 or 1, (or a lone comma).
			switch r.rng.Intn(3) {
			case 0:
				raw = "," + raw
			case 1:
				raw += ","
			default:
				if i := strings.Index(raw, ","); i >= 0 {
					raw = raw[:i] + "," + raw[i:]
				} else {
					raw += ","
				}
			}
			return plain(raw, "", false)
		}
		return plain(raw, canon, valid)
	case core.TypeTextarea:
		if r.chance(8) {
			return wval{elem: textElem(r, ""), v1: ver < 2, valid: true}
		}
		if ver < 2 {
			// Plain text, stored as its HTML.
			s := pick(r, []string{r.word() + " " + r.word(), "a & b", "x < y > z", "été", r.word()})
			return wval{elem: textElem(r, s), raw: s, canon: textareaHTML(s), valid: true, v1: true}
		}
		s := pick(r, []string{r.word() + " " + r.word(), "<p>" + r.word() + " " + r.word() + "</p>", "<p>a &amp; b</p>", "a &lt; b", "Straße"})
		return plain(s, s, true)
	}
	panic("no generator for " + string(f.Type))
}

// choices are the values a picklist takes: its options, or the users.
func choices(f core.Field) []int64 {
	if f.ListType == core.ListUser {
		ids := make([]int64, len(modelUsers))
		for i, u := range modelUsers {
			ids[i] = u.id
		}
		return ids
	}
	ids := make([]int64, len(f.Options))
	for i, o := range f.Options {
		ids[i] = o.Value
	}
	return ids
}

// choiceElem is a picklist choice in the shape a read gives it (<value id="3">Label</value>).
func choiceElem(f core.Field, n int64, name string) string {
	c := choice(f, n)
	if n == 99 {
		c = xValue{ID: strp("99"), Text: "Nobody"}
	}
	s := "<" + name + ` id="` + *c.ID + `"`
	if c.Email != nil {
		s += ` email="` + escapeText(*c.Email) + `"`
	}
	return s + ">" + escapeText(c.Text) + "</" + name + ">"
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, n := range ids {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ",")
}

// defaultOf is the value a create gives a field it leaves out: its default_value, or its default options.
func defaultOf(f core.Field) string {
	if f.DefaultValue != "" {
		return f.DefaultValue
	}
	var ids []int64
	for _, o := range f.Options {
		if o.Default {
			ids = append(ids, o.Value)
			if f.Type == core.TypePickOne {
				break
			}
		}
	}
	slices.Sort(ids)
	return joinIDs(ids)
}

func fieldXML(name, valueElem string) string {
	return "<field><name>" + name + "</name>" + valueElem + "</field>"
}

func recordBody(root string, fields []string) string {
	return "<" + root + "><fields>" + strings.Join(fields, "") + "</fields></" + root + ">"
}

// fieldShapes are <field> elements of a shape the manual refuses (400), each built for a field of k: inside
// <field> only <name>, one <value> and the children of a read are taken, and nothing sent is dropped. Each
// holds a value that would be stored were the shape taken, on a field that is not required where the kind has
// one, so that a core dropping what it does not take would answer 200 or 201, not 400 for another reason.
var fieldShapes = []struct {
	why   string
	field func(k *mKind) string
}{
	{"an unknown element in a field", func(k *mKind) string {
		return "<field><name>" + textField(k) + "</name><value>x</value><colour>red</colour></field>"
	}},
	{"a field without a value", func(k *mKind) string {
		return "<field><name>" + textField(k) + "</name></field>"
	}},
	{"a field without a value, with a read's children", func(k *mKind) string {
		return "<field><name>" + textField(k) + "</name><label>Code</label><sort>1</sort></field>"
	}},
	{"text beside nested values", func(k *mKind) string {
		name, id := picklistOf(k)
		return "<field><name>" + name + "</name><value>" + id + "<value id=\"" + id + "\"/></value></field>"
	}},
	{"a value with an id holding nested values", func(k *mKind) string {
		name, id := picklistOf(k)
		return "<field><name>" + name + "</name><value id=\"" + id + "\"><value id=\"" + id + "\"/></value></field>"
	}},
	{"an id on a field that is not a picklist", func(k *mKind) string {
		return "<field><name>" + textField(k) + "</name><value id=\"1\">x</value></field>"
	}},
	{"nested values on a field that is not a picklist", func(k *mKind) string {
		return "<field><name>" + textField(k) + "</name><value><value id=\"1\">x</value></value></field>"
	}},
}

// textField is the name of a Textbox or Text field of k that is not required, or of its title.
func textField(k *mKind) string {
	for _, f := range k.fields {
		if (f.Type == core.TypeTextbox || f.Type == core.TypeText) && !f.Required {
			return f.Name()
		}
	}
	f, _ := k.field(k.title)
	return f.Name()
}

// picklistOf is a picklist of k, a multiple one where the kind has one, and a value it takes; textField and
// "1" for a kind without a picklist.
func picklistOf(k *mKind) (name, id string) {
	var best *core.Field
	for i, f := range k.fields {
		if f.IsPicklist() && (best == nil || f.Type == core.TypePickMultiple) {
			best = &k.fields[i]
		}
	}
	if best == nil {
		return textField(k), "1"
	}
	return best.Name(), strconv.FormatInt(choices(*best)[0], 10)
}

// writeBody is the body of a write of fields (each a <field> element) to a record of k. Now and then, in an
// operation that may send what the manual refuses, it spoils the body as a whole: 400 for a body of the wrong
// shape (another kind's root element, an unknown element, a <field> with two <value>s, a <field> of a shape
// the manual refuses), 415 for XML that is not well formed. status is 0 for a body left whole.
func (r *run) writeBody(k *mKind, fields []string) (body string, status int, why string) {
	body = recordBody(k.root, fields)
	if !r.bad || !r.chance(12) {
		return body, 0, ""
	}
	fields = slices.Clone(fields)
	if r.chance(40) {
		// In place of the field of that name, if the body sends it: a field sent twice is refused anyway.
		s := pick(r, fieldShapes)
		f := s.field(k)
		name := f[:strings.Index(f, "</name>")+len("</name>")]
		fields = slices.DeleteFunc(fields, func(g string) bool { return strings.HasPrefix(g, name) })
		at := r.rng.Intn(len(fields) + 1)
		return recordBody(k.root, slices.Insert(fields, at, f)), 400, s.why
	}
	switch p := pick(r, []string{"another kind's root element", "an unknown element", "a field with two values", "XML not well formed"}); p {
	case "another kind's root element":
		other := "feature"
		if k.root == other {
			other = "requirement"
		}
		return recordBody(other, fields), 400, p
	case "an unknown element":
		return recordBody(k.root, append(fields, "<colour>red</colour>")), 400, p
	case "a field with two values":
		f := pick(r, k.fields)
		return recordBody(k.root, append(fields, "<field><name>"+f.Name()+"</name><value>1</value><value>2</value></field>")), 400, p
	default:
		return body[:len(body)-2], 415, p
	}
}

// comment is a version comment a write sends: free text of at most 30000 characters, and now and then (in an
// operation that may send what the manual refuses) a longer one (ok false).
func (r *run) comment() (c string, ok bool) {
	switch {
	case r.bad && r.chance(4):
		return strings.Repeat("x", 30001), false
	case r.chance(2):
		// 30000 characters, counted as characters: 60000 bytes of "é" are within the limit.
		return strings.Repeat(pick(r, []string{"x", "é"}), 30000), true
	}
	return pick(r, []string{"", "first draft", "fix & <tidy>", "été", r.word(), "  spaced  "}), true
}

// genCond makes a search condition on kind k: valid ones meant to find something, and now and then one the
// manual refuses (ok false).
func (r *run) genCond(k *mKind) (c mCond, ok bool) {
	someTime := func() string {
		var ts []int64
		for _, rec := range k.recs {
			ts = append(ts, rec.created, rec.updated)
			if rec.deleted != 0 {
				ts = append(ts, rec.deleted)
			}
		}
		if len(ts) == 0 || r.chance(10) {
			return strconv.FormatInt(r.now, 10)
		}
		return strconv.FormatInt(pick(r, ts)+int64(r.rng.Intn(3)-1), 10)
	}
	n := r.rng.Intn(100)
	switch {
	case n < 40:
		var searchable []core.Field
		for _, f := range k.fields {
			if f.IsPicklist() || f.Type == core.TypeTextbox {
				searchable = append(searchable, f)
			}
		}
		f := pick(r, searchable)
		if f.Type == core.TypeTextbox {
			if r.chance(50) {
				return mCond{f.Name(), '=', r.word()}, true
			}
			// Words of other scripts, in other cases, with the accents composed or combining, a final sigma
			// (ς folds to σ), digits of another script, full-width letters; "lead" is not " lead", which the
			// generator writes.
			return mCond{f.Name(), '=', pick(r, []string{"été", "ÉTÉ", "Été", "e\u0301te\u0301", "E\u0301TE\u0301",
				"straße", "STRASSE", "Strasse", "東京", "ελλάδα", "ΕΛΛΆΔΑ", "ΟΔΌΣ", "οδόσ", "١٢٣", "ａｂｃ", "ＡＢＣ", "lead"})}, true
		}
		v := pick(r, choices(f))
		if r.chance(5) {
			v = 9
		}
		return mCond{f.Name(), '=', strconv.FormatInt(v, 10)}, true
	case n < 65:
		return mCond{pick(r, []string{"created_time", "last_updated_time"}), pick(r, []byte("<>")), someTime()}, true
	case n < 80:
		return mCond{pick(r, []string{"created_by", "last_updated_by"}), '=', strconv.FormatInt(pick(r, modelUsers).id, 10)}, true
	case n < 92:
		return mCond{"deleted_time", pick(r, []byte("<>")), someTime()}, true
	}
	// Refused: a field of a type search does not take, an operator a condition does not take, an unknown
	// attribute, a time that is not a 10-digit timestamp (too short, signed, with a leading zero, 11 digits),
	// a Textbox value that is not one word.
	now := strconv.FormatInt(r.now, 10)
	tf, _ := k.field(k.title)
	title := tf.Name()
	bad := []mCond{{"created_time", '=', "5"}, {"created_by", '>', "5"}, {"colour", '=', "red"},
		{"created_time", '>', "yesterday"}, {"created_time", '>', "12345"}, {"last_updated_time", '<', "-1"},
		{"created_time", '<', "-" + now}, {"last_updated_time", '>', "0000000001"}, {"created_time", '<', "0" + now},
		{"created_time", '<', now + "0"}, {"last_updated_time", '<', "+" + now}, {"deleted_time", '>', "999999999"},
		{title, '=', "a-b"}, {title, '=', "two words"}, {title, '=', "x."}, {title, '=', "été!"}}
	for _, f := range k.fields {
		if !f.IsPicklist() && f.Type != core.TypeTextbox {
			bad = append(bad, mCond{f.Name(), '=', "1"})
		}
	}
	return pick(r, bad), false
}

// query writes conditions as a query string, each operator raw or percent-encoded, and a value beyond
// ASCII letters and digits percent-encoded in UTF-8 or, now and then, sent raw (but for a space, which a
// request line cannot hold).
func (r *run) query(conds []mCond) string {
	parts := make([]string, len(conds))
	for i, c := range conds {
		op := string(c.op)
		if r.chance(50) {
			op = map[byte]string{'<': "%3C", '>': "%3E", '=': "%3D"}[c.op]
		}
		v := c.val
		if r.chance(70) || strings.Contains(v, " ") {
			v = url.PathEscape(v)
		}
		parts[i] = c.attr + op + v
	}
	return strings.Join(parts, "&")
}

// encode chooses how a write body travels: mostly UTF-8 as application/xml, now and then another XML media
// type or none, a byte-order mark, an XML declaration, ISO-8859-1 named by the declaration or by the
// Content-Type's charset (which the manual puts above the declaration: a body read and sent back keeps its
// UTF-8 declaration then), or UTF-16 with a byte-order mark. contentType "" sends no Content-Type, which
// the core reads as XML.
func (r *run) encode(body string) (out, contentType, how string) {
	contentType = "application/xml"
	if r.chance(10) {
		contentType = pick(r, []string{"text/xml", "application/vnd.model+xml; version=2", ""})
	}
	decl, bare := "", body
	if rest, ok := strings.CutPrefix(body, "<?xml"); ok {
		if i := strings.Index(rest, "?>"); i >= 0 {
			decl, bare = "<?xml"+rest[:i+2], strings.TrimLeft(rest[i+2:], "\n")
		}
	}
	latin1, ok := toLatin1(bare)
	switch n := r.rng.Intn(100); {
	case n < 4:
		return "\xEF\xBB\xBF" + body, contentType, "UTF-8 with a byte-order mark"
	case n < 8:
		return `<?xml version="1.0" encoding="utf-8"?>` + "\n" + bare, contentType, "UTF-8 declared"
	case n < 12 && ok:
		return `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" + latin1, contentType, "ISO-8859-1 declared"
	case n < 16 && ok && contentType != "":
		if decl != "" {
			latin1 = decl + "\n" + latin1 // the read's UTF-8 declaration, overruled by the charset
		}
		return latin1, contentType + "; charset=iso-8859-1", "ISO-8859-1 by the Content-Type's charset"
	case n < 20:
		order, bom := binary.AppendByteOrder(binary.LittleEndian), "\xFF\xFE"
		if r.chance(50) {
			order, bom = binary.BigEndian, "\xFE\xFF"
		}
		b := []byte(bom)
		for _, u := range utf16.Encode([]rune(bare)) {
			b = order.AppendUint16(b, u)
		}
		return string(b), contentType, "UTF-16 with a byte-order mark"
	}
	return body, contentType, ""
}

// toLatin1 is s in ISO-8859-1; ok is false when s has a character beyond it.
func toLatin1(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	for _, c := range s {
		if c > 0xFF {
			return "", false
		}
		b = append(b, byte(c))
	}
	return string(b), true
}
