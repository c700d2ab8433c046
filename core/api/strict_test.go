package api

import (
	"net/http"
	"strings"
	"testing"
)

// readValues reads record id of seg through the interface and returns its fields' values by name (the text
// of <value>, or the ids of its nested values joined by commas).
func (e *v2Env) readValues(seg, id string) map[string]string {
	e.t.Helper()
	var doc struct {
		Fields []struct {
			Name  string `xml:"name"`
			Value struct {
				ID     string `xml:"id,attr"`
				Text   string `xml:",chardata"`
				Nested []struct {
					ID string `xml:"id,attr"`
				} `xml:"value"`
			} `xml:"value"`
		} `xml:"fields>field"`
	}
	decode(e.t, e.get("/"+seg+"/"+id, http.StatusOK), &doc)
	out := map[string]string{}
	for _, f := range doc.Fields {
		v := f.Value.Text
		if f.Value.ID != "" {
			v = f.Value.ID
		}
		if len(f.Value.Nested) > 0 {
			var ids []string
			for _, n := range f.Value.Nested {
				ids = append(ids, n.ID)
			}
			v = strings.Join(ids, ",")
		}
		out[f.Name] = v
	}
	return out
}

// message is the <message> of an error body.
func message(t *testing.T, body []byte) string {
	t.Helper()
	var got struct {
		Message string `xml:"message"`
	}
	decode(t, body, &got)
	return got.Message
}

// putField sends one field of requirement 1 as alice and returns the status and the error message, if any.
func (e *v2Env) putField(name, value string) (int, string) {
	e.t.Helper()
	body := "<requirement><fields><field><name>" + name + "</name><value>" + value +
		"</value></field></fields></requirement>"
	status, b := e.do(http.MethodPut, e.base+"/re/1", "alice", body)
	if status == http.StatusOK {
		return status, ""
	}
	return status, message(e.t, b)
}

// Values the manual's types do not describe are refused with 400 naming the field and the rule, and leave the
// record as it was; values of the documented shape are stored in their canonical form.
func TestStrictValues(t *testing.T) {
	e := v2Setup(t)
	tests := []struct {
		field, value string
		stored       string // the value read back after a 200
		refusal      string // in the 400 message; "" when accepted
	}{
		// Number: decimal digits, an optional sign and an optional fraction of digits.
		{"field_109", "12", "12", ""},
		{"field_109", "-12.50", "-12.50", ""},
		{"field_109", "+3.25", "3.25", ""},
		{"field_109", "0.000", "0.000", ""},
		{"field_109", " 7 ", "7", ""},
		{"field_109", "NaN", "", "field_109: not a decimal number"},
		{"field_109", "Inf", "", "field_109: not a decimal number"},
		{"field_109", "-Infinity", "", "field_109: not a decimal number"},
		{"field_109", "0x1p4", "", "field_109: not a decimal number"},
		{"field_109", "1_0", "", "field_109: not a decimal number"},
		{"field_109", "1e3", "", "field_109: not a decimal number"},
		{"field_109", "0.1e1", "", "field_109: not a decimal number"},
		{"field_109", ".5", "", "field_109: not a decimal number"},
		{"field_109", "5.", "", "field_109: not a decimal number"},
		{"field_109", "-", "", "field_109: not a decimal number"},
		{"field_109", "1.2.3", "", "field_109: not a decimal number"},
		{"field_109", "1" + strings.Repeat("0", 400), "", "field_109: number out of range"},
		// Email: a local part, @ and a domain.
		{"field_107", "a@b.test", "a@b.test", ""},
		{"field_107", "a@", "", "field_107: not an email address"},
		{"field_107", "@b.test", "", "field_107: not an email address"},
		{"field_107", "@", "", "field_107: not an email address"},
		{"field_107", "a b@c.test", "", "field_107: not an email address"},
		// Multiple picklist: a comma-separated list without empty items.
		{"field_105", "3, 1,3", "1,3", ""},
		{"field_105", "1,,3", "", "field_105: empty item in the list of values"},
		{"field_105", ",1", "", "field_105: empty item in the list of values"},
		{"field_105", "1,", "", "field_105: empty item in the list of values"},
		{"field_105", "<value id=\"1\"/><value id=\"\"/>", "", "field_105: empty item in the list of values"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"="+clip(tt.value), func(t *testing.T) {
			e := e.with(t)
			before := e.readValues("re", "1")
			status, msg := e.putField(tt.field, tt.value)
			if tt.refusal == "" {
				if status != http.StatusOK {
					t.Fatalf("status %d (%s), want 200", status, msg)
				}
				if got := e.readValues("re", "1")[tt.field]; got != tt.stored {
					t.Errorf("stored %q, want %q", got, tt.stored)
				}
				return
			}
			if status != http.StatusBadRequest || !strings.Contains(msg, tt.refusal) {
				t.Errorf("status %d, message %q; want 400 saying %q", status, msg, tt.refusal)
			}
			if after := e.readValues("re", "1"); after[tt.field] != before[tt.field] {
				t.Errorf("refused write changed %s from %q to %q", tt.field, before[tt.field], after[tt.field])
			}
		})
	}
}

// Inside <field>, only <name>, one <value> and the children of a record read are taken; anything else is
// refused rather than dropped, and a read sent back still writes.
func TestStrictFieldElements(t *testing.T) {
	e := v2Setup(t)
	field := func(inner string) string {
		return "<requirement><fields><field>" + inner + "</field></fields></requirement>"
	}
	tests := []struct {
		name, body string
		refusal    string // in the 400 message
	}{
		{"unknown element", field("<name>field_101</name><value>New</value><colour>red</colour>"),
			"field_101: unexpected element <colour> in <field>"},
		{"misspelt value", field("<name>field_101</name><vaule>New</vaule>"), "unexpected element <vaule> in <field>"},
		{"no value", field("<name>field_101</name>"), "field_101: sent without a <value>"},
		{"no value, read children only", field("<name>field_101</name><label>Title</label><sort>1</sort>"),
			"field_101: sent without a <value>"},
		{"text beside nested values", field(`<name>field_105</name><value>2<value id="1">Web</value></value>`),
			"field_105: text beside nested <value>s"},
		{"text after nested values", field(`<name>field_105</name><value><value id="1">Web</value>3</value>`),
			"field_105: text beside nested <value>s"},
		{"id and nested values", field(`<name>field_105</name><value id="2"><value id="1">Web</value></value>`),
			"field_105: a <value id=\"..\"> holds no nested <value>s"},
		{"nested values on a Textbox", field(`<name>field_101</name><value><value>New</value></value>`),
			"field_101: a Textbox value is text"},
		{"id on a Textbox", field(`<name>field_101</name><value id="3">New</value>`),
			"field_101: a Textbox value is text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.with(t)
			before := e.get("/re/1", http.StatusOK)
			status, b := e.do(http.MethodPut, e.base+"/re/1", "alice", tt.body)
			if msg := message(t, b); status != http.StatusBadRequest || !strings.Contains(msg, tt.refusal) {
				t.Errorf("status %d, message %q; want 400 saying %q", status, msg, tt.refusal)
			}
			if after := e.get("/re/1", http.StatusOK); string(after) != string(before) {
				t.Errorf("a refused write changed the record:\n%s\nto\n%s", before, after)
			}
		})
	}

	// What docs/api.md promises for read, modify, write: a read of either version sent back, its picklist
	// values in the shape of the read, with one value edited.
	for _, version := range []string{"/api/acme", "/api2/acme"} {
		t.Run("read sent back "+version, func(t *testing.T) {
			e := e.with(t)
			status, doc := e.do(http.MethodGet, e.url+version+"/re/2", "alice", "")
			if status != http.StatusOK {
				t.Fatalf("read: status %d", status)
			}
			for _, child := range []string{"<label", "<sort", "<prefix", "<list_type"} {
				if !strings.Contains(string(doc), child) {
					t.Fatalf("the read has no %s; the test no longer covers it:\n%s", child, doc)
				}
			}
			if version == "/api2/acme" && !strings.Contains(string(doc), "<value_plaintext") {
				t.Fatalf("the read has no <value_plaintext>:\n%s", doc)
			}
			title := "Import through " + version
			edited, ok := setTitle(string(doc), title)
			if !ok {
				t.Fatalf("the read holds no field_101 value:\n%s", doc)
			}
			status, b := e.do(http.MethodPut, e.url+version+"/re/2", "alice", edited)
			if status != http.StatusOK {
				t.Fatalf("PUT of the read: status %d, want 200; body:\n%s", status, b)
			}
			got := e.readValues("re", "2")
			if got["field_101"] != title || got["field_103"] != "2" || got["field_105"] != "2" {
				t.Errorf("after the PUT: title %q, status %q, platforms %q; want the edited title, 2, 2",
					got["field_101"], got["field_103"], got["field_105"])
			}
		})
	}
}

// setTitle replaces the value of field_101 in a record read.
func setTitle(doc, title string) (string, bool) {
	i := strings.Index(doc, "<name>field_101</name>")
	if i < 0 {
		return doc, false
	}
	j := strings.Index(doc[i:], "<value>")
	k := strings.Index(doc[i:], "</value>")
	if j < 0 || k < j {
		return doc, false
	}
	return doc[:i+j] + "<value>" + title + doc[i+k:], true
}

// A Textbox search takes a word of any script and finds the titles holding it, ignoring case; what is not
// one word is refused with a message that says what a search value may hold.
func TestSearchWords(t *testing.T) {
	e := v2Setup(t)
	e.put("alice", "re", 1, "field_101", "Été")
	e.put("alice", "re", 2, "field_101", "Straße")
	e.put("alice", "re", 3, "field_101", "naïve café")
	tests := []struct{ query, want string }{
		{"field_101=%C3%A9t%C3%A9", "RE-1"}, // été
		{"field_101=été", "RE-1"},           // sent raw
		{"field_101=%C3%89T%C3%89", "RE-1"}, // ÉTÉ
		{"field_101=STRASSE", "RE-2"},
		{"field_101=stra%C3%9Fe", "RE-2"},
		{"field_101=na%C3%AFve", ""}, // one word of a title of two
	}
	for _, tt := range tests {
		if got := e.list("/re/search?"+tt.query, "search_results").ids(); got != tt.want {
			t.Errorf("search %s = %q, want %q", tt.query, got, tt.want)
		}
	}
	for _, q := range []string{"field_101=na%C3%AFve%20caf%C3%A9", "field_101=a-b", "field_101=%E2%82%AC5", "field_101=%FF"} {
		msg := message(t, e.get("/re/search?"+q, http.StatusBadRequest))
		if !strings.Contains(msg, "a Textbox search value is one word: letters and digits of any script") {
			t.Errorf("search %s: message %q does not say what a value may hold", q, msg)
		}
	}
}

// An id is written without leading zeros: /re/01 names nothing (404), so a record has one address, and a
// DELETE of /re/01 deletes nothing.
func TestIDLeadingZero(t *testing.T) {
	e := v2Setup(t)
	for _, tt := range []struct{ method, path string }{
		{http.MethodGet, "/re/01"},
		{http.MethodGet, "/re/001"},
		{http.MethodPut, "/re/01"},
		{http.MethodDelete, "/re/01"},
		{http.MethodGet, "/re/01/related"},
		{http.MethodGet, "/re/1/fieldhistory/0103"},
		{http.MethodGet, "/re/01/fieldhistory/103"},
		{http.MethodGet, "/re/view/012"},
		{http.MethodGet, "/re/view/012/search?created_by=5"},
		{http.MethodGet, "/user/05"},
	} {
		body := ""
		if tt.method == http.MethodPut {
			body = "<requirement><fields><field><name>field_101</name><value>Zero</value></field></fields></requirement>"
		}
		if status, b := e.do(tt.method, e.base+tt.path, "alice", body); status != http.StatusNotFound {
			t.Errorf("%s %s: status %d, want 404; body:\n%s", tt.method, tt.path, status, b)
		}
	}
	if got := e.readValues("re", "1")["field_101"]; got != "Export" {
		t.Errorf("RE-1 title after the requests to /re/01: %q, want Export", got)
	}
	// The id field of a body sent back names the record the same way.
	status, b := e.do(http.MethodPut, e.base+"/re/1", "alice",
		"<requirement><fields><field><name>id</name><value>01</value></field></fields></requirement>")
	if msg := message(t, b); status != http.StatusBadRequest || !strings.Contains(msg, "id: does not match the record addressed") {
		t.Errorf("PUT with id 01: status %d, message %q; want 400 saying the id does not match", status, msg)
	}
}
