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
