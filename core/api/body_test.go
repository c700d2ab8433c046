package api

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/reqgate/reqgate/core"
)

func TestParseRecordBody(t *testing.T) {
	tests := []struct {
		name, in string
		want     []bodyField
		status   int // 0: success
	}{
		{"simple", `<?xml version="1.0"?><requirement><fields><field><name>field_1</name><value>a &amp; b</value></field></fields></requirement>`,
			[]bodyField{{Name: "field_1", Value: "a & b"}}, 0},
		{"comments and space", "<!-- c -->\n<requirement>\n <fields>\n  <field>\n   <name> field_1 </name>\n   <value> x </value>\n  </field>\n </fields>\n</requirement>\n<!-- end -->",
			[]bodyField{{Name: "field_1", Value: " x "}}, 0},
		{"cdata", `<requirement><fields><field><name>f</name><value><![CDATA[<b>x</b>]]></value></field></fields></requirement>`,
			[]bodyField{{Name: "f", Value: "<b>x</b>"}}, 0},
		{"ids", `<requirement><fields><field><name>f</name><value id="3">Label</value></field><field><name>g</name><value><value id="1">a</value><value>2</value></value></field></fields></requirement>`,
			[]bodyField{{Name: "f", Value: "Label", IDs: []string{"3"}}, {Name: "g", IDs: []string{"1", "2"}}}, 0},
		{"ignored children", `<requirement><fields><field><name>f</name><label>L<b/></label><value>v</value><sort>1</sort></field></fields></requirement>`,
			[]bodyField{{Name: "f", Value: "v"}}, 0},
		{"empty value", `<requirement><fields><field><name>f</name><value/></field></fields></requirement>`,
			[]bodyField{{Name: "f"}}, 0},
		{"no fields", `<requirement/>`, nil, 0},
		{"wrong root", `<feature/>`, nil, 400},
		{"malformed", `<requirement>`, nil, 415},
		{"nothing", ``, nil, 415},
		{"text before root", `x<requirement/>`, nil, 415},
		{"text after root", `<requirement/>x`, nil, 415},
		{"second root", `<requirement/><requirement/>`, nil, 415},
		{"dtd", `<!DOCTYPE r><requirement/>`, nil, 400},
		{"entity", `<requirement><fields><field><name>&x;</name></field></fields></requirement>`, nil, 415},
		{"element in name", `<requirement><fields><field><name><b/></name></field></fields></requirement>`, nil, 400},
		{"two names", `<requirement><fields><field><name>a</name><name>b</name></field></fields></requirement>`, nil, 400},
		{"two values", `<requirement><fields><field><name>a</name><value>x</value><value>y</value></field></fields></requirement>`, nil, 400},
		{"two values before the name", `<requirement><fields><field><value>x</value><value/><name>a</name></field></fields></requirement>`, nil, 400},
		{"two values with ids", `<requirement><fields><field><name>a</name><value id="1"/><value id="2"/></field></fields></requirement>`, nil, 400},
		{"element in value", `<requirement><fields><field><name>a</name><value><b/></value></field></fields></requirement>`, nil, 400},
		{"deep", `<requirement><fields><field><name>a</name><x>` + strings.Repeat("<y>", 20) + strings.Repeat("</y>", 20) + `</x></field></fields></requirement>`, nil, 400},
		{"latin-1", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><requirement><fields><field><name>f</name><value>caf\xe9</value></field></fields></requirement>",
			[]bodyField{{Name: "f", Value: "café"}}, 0},
		{"windows-1252", "<?xml version='1.0' encoding='windows-1252'?><requirement><fields><field><name>f</name><value>\x80 5</value></field></fields></requirement>",
			[]bodyField{{Name: "f", Value: "€ 5"}}, 0},
		{"us-ascii", `<?xml version="1.0" encoding="US-ASCII"?><requirement/>`, nil, 0},
		{"utf-8 byte-order mark", "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?><requirement><fields><field><name>f</name><value>\xc3\xa9</value></field></fields></requirement>",
			[]bodyField{{Name: "f", Value: "é"}}, 0},
		{"byte-order mark without declaration", "\xef\xbb\xbf<requirement/>", nil, 0},
		{"byte-order mark above another declared encoding", "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><requirement><fields><field><name>f</name><value>\xc3\xa9</value></field></fields></requirement>",
			[]bodyField{{Name: "f", Value: "é"}}, 0},
		{"utf-16le", utf16LE("\ufeff<?xml version=\"1.0\" encoding=\"UTF-16\"?><requirement><fields><field><name>f</name><value>é€</value></field></fields></requirement>"),
			[]bodyField{{Name: "f", Value: "é€"}}, 0},
		{"unsupported encoding", `<?xml version="1.0" encoding="EBCDIC-US"?><requirement/>`, nil, 415},
		{"utf-16 declared without a byte-order mark", `<?xml version="1.0" encoding="UTF-16"?><requirement/>`, nil, 415},
		{"invalid utf-8", "<requirement><fields><field><name>f</name><value>\xe9</value></field></fields></requirement>", nil, 415},
		{"xml 1.1", `<?xml version="1.1"?><requirement/>`, nil, 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRecordBody([]byte(tt.in), "requirement", "")
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
				return
			}
			if got := statusOf(err); got != tt.status {
				t.Errorf("status %d (%v), want %d", got, err, tt.status)
			}
		})
	}
}

// The charset parameter of a Content-Type decides the encoding above the XML declaration; a byte-order mark
// decides above both.
func TestParseRecordBodyCharset(t *testing.T) {
	latin := "<?xml version=\"1.0\" encoding=\"UTF-8\"?><requirement><fields><field><name>f</name><value>caf\xe9</value></field></fields></requirement>"
	tests := []struct {
		name, in, charset string
		want              string // the value of f; "" when refused
		status            int
	}{
		{"latin-1 by charset", latin, "ISO-8859-1", "café", 0},
		{"quoted alias", latin, "Latin1", "café", 0},
		{"utf-8 charset", "<requirement><fields><field><name>f</name><value>\xc3\xa9</value></field></fields></requirement>", "utf-8", "é", 0},
		{"utf-8 charset over a declared latin-1", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><requirement><fields><field><name>f</name><value>caf\xc3\xa9</value></field></fields></requirement>", "UTF-8", "café", 0},
		{"byte-order mark over charset", "\xef\xbb\xbf<requirement><fields><field><name>f</name><value>\xc3\xa9</value></field></fields></requirement>", "ISO-8859-1", "é", 0},
		{"unsupported charset", latin, "koi8-r", "", 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRecordBody([]byte(tt.in), "requirement", tt.charset)
			if s := statusOf(err); s != tt.status {
				t.Fatalf("status %d (%v), want %d", s, err, tt.status)
			}
			if tt.status != 0 {
				if !strings.Contains(err.Error(), "koi8-r") || !strings.Contains(err.Error(), "not supported") {
					t.Errorf("message %q does not say the encoding is not supported", err)
				}
				return
			}
			if len(got) != 1 || got[0].Value != tt.want {
				t.Errorf("got %+v, want f = %q", got, tt.want)
			}
		})
	}
}

// utf16LE encodes s as UTF-16, little-endian.
func utf16LE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

// statusOf is the status writeError gives a parse error.
func statusOf(err error) int {
	var he *httpError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &he):
		return he.status
	case errors.Is(err, core.ErrInvalid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// FuzzRecordBody: the record-body parser never panics, refuses only with 400 or 415, and what it accepts
// has named fields within the limits.
func FuzzRecordBody(f *testing.F) {
	for _, s := range []string{
		`<requirement><fields><field><name>field_101</name><value>x</value></field></fields></requirement>`,
		`<requirement><fields><field><name>field_105</name><value><value id="1">Web</value></value></field></fields></requirement>`,
		`<?xml version="1.0"?><!-- c --><requirement><fields><field><name>f</name><value><![CDATA[a]]]]><![CDATA[>b]]></value></field></fields></requirement>`,
		`<!DOCTYPE x [<!ENTITY a "b">]><requirement/>`,
		`<requirement><fields><field><value id="3"/></field></fields></requirement>`,
		`<requirement xmlns:a="urn:x"><a:fields/></requirement>`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := parseRecordBody(data, "requirement", "")
		if err != nil {
			if s := statusOf(err); s != 400 && s != 415 {
				t.Fatalf("status %d for %v", s, err)
			}
			return
		}
		if len(fields) > maxBodyFields {
			t.Fatalf("%d fields", len(fields))
		}
		for _, f := range fields {
			if f.Name == "" || len(f.Name) > maxNameLen || len(f.IDs) > maxValueIDs+1 {
				t.Fatalf("field %+v", f)
			}
		}
	})
}
