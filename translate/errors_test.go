package translate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestJSONSyntaxErrorPosition(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		offset    int64
		line, col int
		msg       string
	}{
		{"empty", "", 0, 1, 1, "unexpected end of input"},
		{"bad literal", "{\"a\":\n  {\"b\": tru}}", 17, 2, 12, "in literal true"},
		{"missing comma", `{"a": {"b": "1" "c": "2"}}`, 16, 1, 17, "expected ',' or '}'"},
		{"trailing comma", `{"a": [1,]}`, 9, 1, 10, "expected a value"},
		{"unterminated string", `{"a": "x`, 6, 1, 7, "unterminated string"},
		{"bad escape", `{"a": "\q"}`, 7, 1, 8, `invalid escape \q`},
		{"control char", "{\"a\": \"x\ty\"}", 8, 1, 9, "control character U+0009"},
		{"leading zero", `{"a": 01}`, 7, 1, 8, "expected ',' or '}'"},
		{"bare minus", `{"a": -}`, 7, 1, 8, "expected a digit"},
		{"bad exponent", `{"a": 1e}`, 8, 1, 9, "in exponent"},
		{"after value", `{"a": 1} x`, 9, 1, 10, "after the top-level value"},
		{"key not string", `{a: 1}`, 1, 1, 2, "expected a string key"},
		{"missing colon", `{"a" 1}`, 5, 1, 6, "expected ':'"},
		{"columns count characters", "{\"ä\": \"ö\" ]", 12, 1, 11, "expected ',' or '}'"},
		{"third line", "{\n\"a\":\n[1 2]}", 10, 3, 4, "expected ',' or ']'"},
		{"lone surrogate", `{"a": "\ud800x"}`, 7, 1, 8, "unpaired surrogate"},
		{"bad unicode escape", `{"a": "\u12G4"}`, 7, 1, 8, `invalid \u escape`},
		{"invalid utf-8", "{\"a\": \"\xff\"}", 7, 1, 8, "invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := JSONToXML([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("JSONToXML(%q) error = %v, want *SyntaxError", tt.in, err)
			}
			if got, want := se.Offset, tt.offset; got != want {
				t.Errorf("Offset = %d, want %d (%v)", got, want, se)
			}
			if se.Line != tt.line || se.Column != tt.col {
				t.Errorf("position = %d:%d, want %d:%d (%v)", se.Line, se.Column, tt.line, tt.col, se)
			}
			if !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("Msg = %q, want it to contain %q", se.Msg, tt.msg)
			}
			if want := fmt.Sprintf("line %d, column %d", tt.line, tt.col); !strings.Contains(se.Error(), want) {
				t.Errorf("Error() = %q does not name %q", se.Error(), want)
			}
		})
	}
}

func TestJSONStructureErrors(t *testing.T) {
	tests := []struct {
		name, in, path, msg string
	}{
		{"array root", `[{"a":1}]`, "", "top-level value must be an object"},
		{"string root", `"a"`, "", "top-level value must be an object"},
		{"two roots", `{"a":1,"b":2}`, "", "exactly one key"},
		{"no root", `{}`, "", "exactly one key"},
		{"root array", `{"a":[1,2]}`, "/a", "root element cannot be an array"},
		{"bad root name", `{"1a":"x"}`, "/1a", "not an XML element name"},
		{"space in name", `{"a":{"b c":"x"}}`, "/a/b c", "not an XML element name"},
		{"empty key", `{"a":{"":"x"}}`, "/a/", "empty key"},
		{"bad attribute name", `{"a":{"@1":"x"}}`, "/a/@1", "not an XML attribute name"},
		{"empty attribute name", `{"a":{"@":"x"}}`, "/a/@", "not an XML attribute name"},
		{"object attribute", `{"a":{"@x":{"y":1}}}`, "/a/@x", "cannot be an attribute value"},
		{"array attribute", `{"a":{"@x":[1]}}`, "/a/@x", "cannot be an attribute value"},
		{"object text", `{"a":{"#text":{}}}`, "/a/#text", "cannot be an attribute value or #text"},
		{"unknown special key", `{"a":{"#cdata":"x"}}`, "/a/#cdata", "only #text"},
		{"mixed content", `{"a":{"#text":"x","b":"y"}}`, "/a/#text", "#text together with child elements"},
		{"nested array", `{"a":{"b":[[1]]}}`, "/a/b/0", "array inside an array"},
		{"duplicate key", `{"a":{"b":1,"b":2}}`, "/a/b", "duplicate key"},
		{"control character", `{"a":{"b":["ok","x\u0001y"]}}`, "/a/b/1", "U+0001 cannot be written"},
		{"nul in attribute", `{"a":{"@x":"\u0000"}}`, "/a/@x", "U+0000 cannot be written"},
		{"noncharacter", `{"a":"\uffff"}`, "/a", "U+FFFF cannot be written"},
		{"pointer escaping", `{"a":{"b/c~":1}}`, "/a/b~1c~0", "not an XML element name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := JSONToXML([]byte(tt.in))
			var se *StructureError
			if !errors.As(err, &se) {
				t.Fatalf("JSONToXML(%s) error = %v, want *StructureError", tt.in, err)
			}
			if got, want := se.Path, tt.path; got != want {
				t.Errorf("Path = %q, want %q (%v)", got, want, se)
			}
			if !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("Msg = %q, want it to contain %q", se.Msg, tt.msg)
			}
		})
	}
}

func TestXMLErrors(t *testing.T) {
	tests := []struct {
		name, in  string
		line, col int
		msg       string
	}{
		{"empty", "", 1, 1, "no root element"},
		{"doctype", "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", 1, 1, "DOCTYPE is not allowed"},
		{"undefined entity", "<a>&nbsp;</a>", 1, 4, "undefined entity"},
		{"bare ampersand", "<a>fish & chips</a>", 1, 9, "& must start an entity reference"},
		{"mismatched", "<a><b></a></b>", 1, 7, "expected </b>"},
		{"unclosed", "<a>\n<b>", 2, 1, "<b> is not closed"},
		{"two roots", "<a/><b/>", 1, 5, "content after the root element"},
		{"text before root", "hello <a/>", 1, 1, "text before the root element"},
		{"mixed", "<a>x<b/></a>", 1, 4, "text mixed with child elements"},
		{"mixed after child", "<a><b/>tail</a>", 1, 8, "text mixed with child elements"},
		{"duplicate attribute", `<a x="1" x="2"/>`, 1, 10, "duplicate attribute"},
		{"unquoted attribute", `<a x=1/>`, 1, 6, "expected a quoted value"},
		{"lt in attribute", `<a x="<"/>`, 1, 7, "< in the value"},
		{"control character", "<a>\x01</a>", 1, 4, "U+0001 is not allowed"},
		{"invalid utf-8", "<a>\xff</a>", 1, 4, "invalid UTF-8"},
		{"bad char ref", "<a>&#0;</a>", 1, 4, "invalid character reference"},
		{"encoding", `<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, 1, 1, "unsupported encoding"},
		{"unterminated cdata", "<a><![CDATA[x</a>", 1, 4, "unterminated CDATA"},
		{"unterminated comment", "<a><!-- x</a>", 1, 4, "unterminated comment"},
		{"bad name", "<1a/>", 1, 2, "expected an element name"},
		{"no space between attributes", `<a x="1"y="2"/>`, 1, 9, "expected white space"},
		{"deep", strings.Repeat("<a>", MaxDepth+1), 1, 3*MaxDepth + 1, "nested deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := XMLToJSON([]byte(tt.in))
			var xe *XMLError
			if !errors.As(err, &xe) {
				t.Fatalf("XMLToJSON(%q) error = %v, want *XMLError", tt.in, err)
			}
			if xe.Line != tt.line || xe.Column != tt.col {
				t.Errorf("position = %d:%d, want %d:%d (%v)", xe.Line, xe.Column, tt.line, tt.col, xe)
			}
			if !strings.Contains(xe.Msg, tt.msg) {
				t.Errorf("Msg = %q, want it to contain %q", xe.Msg, tt.msg)
			}
		})
	}
}

func TestJSONDepthLimit(t *testing.T) {
	in := strings.Repeat(`{"a":`, 2*MaxDepth+1) + "1" + strings.Repeat("}", 2*MaxDepth+1)
	_, err := JSONToXML([]byte(in))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nested deeper") {
		t.Fatalf("error = %v, want a depth *SyntaxError", err)
	}
	// Within the JSON limit but deeper than XML allows.
	in = strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	_, err = JSONToXML([]byte(in))
	var st *StructureError
	if !errors.As(err, &st) || !strings.Contains(st.Msg, "nested deeper") {
		t.Fatalf("error = %v, want a depth *StructureError", err)
	}
	// The deepest document JSON may give is the deepest XML may read.
	in = strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth)
	x, err := JSONToXML([]byte(in))
	if err != nil {
		t.Fatalf("JSONToXML of %d levels: %v", MaxDepth, err)
	}
	if _, err := XMLToJSON(x); err != nil {
		t.Fatalf("XMLToJSON of %d levels: %v", MaxDepth, err)
	}
}

// TestErrorMetrics checks that failures are counted by kind.
func TestErrorMetrics(t *testing.T) {
	x0, s0, st0 := xmlErrors.Get(), syntaxErrors.Get(), structureErrors.Get()
	XMLToJSON([]byte("<a>"))
	JSONToXML([]byte("{"))
	JSONToXML([]byte("[]"))
	JSONToXML([]byte(`{"a":"1"}`))
	if got := xmlErrors.Get() - x0; got != 1 {
		t.Errorf("xml errors +%d, want +1", got)
	}
	if got := syntaxErrors.Get() - s0; got != 1 {
		t.Errorf("syntax errors +%d, want +1", got)
	}
	if got := structureErrors.Get() - st0; got != 1 {
		t.Errorf("structure errors +%d, want +1", got)
	}
}
