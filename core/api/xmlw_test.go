package api

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

// Text, attributes and CDATA written by xmlw read back as written (after the replacement of characters
// XML cannot carry), including a CDATA section holding "]]>" and carriage returns, which XML readers
// would turn into line feeds unless written as references.
func TestXMLRoundTrip(t *testing.T) {
	inputs := []string{"", "a", "x]]>y", "]]>", "]]]]>>", "<b>bold</b> & co", "tab\tline\nend", "\x01ctl", "a]]", "]",
		"crlf\r\nend", "lone\rcr", "\r", "\r\n", "\r\r\n\n", "]]\r>", "]]>\r\n<p>x</p>\r"}
	for _, in := range inputs {
		x := newXML()
		x.open("doc")
		x.elemAttrs("t", in, "a", in)
		x.elemCDATA("c", in)
		x.close("doc")
		var doc struct {
			T struct {
				A    string `xml:"a,attr"`
				Text string `xml:",chardata"`
			} `xml:"t"`
			C string `xml:"c"`
		}
		if err := xml.Unmarshal(x.bytes(), &doc); err != nil {
			t.Fatalf("%q: document does not parse: %v\n%s", in, err, x.bytes())
		}
		want := strings.ReplaceAll(in, "\x01", "\uFFFD")
		if doc.T.Text != want || doc.T.A != want || doc.C != want {
			t.Errorf("%q read back as text %q, attr %q, cdata %q", in, doc.T.Text, doc.T.A, doc.C)
		}
	}
}

// CDATA holds no carriage return: each leaves the section as &#xD;, and no empty section is left behind.
func TestCDATACarriageReturn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "<![CDATA[]]>"},
		{"<b>x</b>", "<![CDATA[<b>x</b>]]>"},
		{"a\r\nb", "<![CDATA[a]]>&#xD;<![CDATA[\nb]]>"},
		{"a\rb", "<![CDATA[a]]>&#xD;<![CDATA[b]]>"},
		{"\r\r", "&#xD;&#xD;"},
		{"x\r", "<![CDATA[x]]>&#xD;"},
		{"]]>\r", "<![CDATA[]]]]><![CDATA[>]]>&#xD;"},
	}
	for _, tt := range tests {
		var x xmlw
		x.cdata(tt.in)
		if got := string(x.b); got != tt.want {
			t.Errorf("cdata(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"<b>Important:</b> customers ask to save as <i>CSV</i>.", "Important: customers ask to save as CSV."},
		{"<p>one</p><p>two</p>", "one\ntwo"},
		{"a<br>b<br/>c<BR />d", "a\nb\nc\nd"},
		{"&lt;tag&gt; &amp; &#233;", "<tag> & é"},
		{"x<script>alert(1)</script>y<style>p{}</style>z", "xyz"},
		{"<ul><li>a</li><li>b</li></ul>", "a\nb"},
		{"broken <b", "broken <b"},
		{"<p></p><p></p><p></p><p>x</p>", "x"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := plainText(tt.in); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTextHTML(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a < b & c", "a &lt; b &amp; c"},
		{"<b>not bold</b>", "&lt;b&gt;not bold&lt;/b&gt;"},
		{"&amp; is an entity", "&amp;amp; is an entity"},
		{"one\ntwo\r\nthree\rfour", "one<br />two<br />three<br />four"},
		{"\"quoted\" 'text'", "\"quoted\" 'text'"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := textHTML(tt.in); got != tt.want {
			t.Errorf("textHTML(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzTextHTML: text written in version 1 reads back in version 1 as written, within the limits textHTML
// states (line feeds only, trimmed, at most one empty line in a row).
func FuzzTextHTML(f *testing.F) {
	for _, s := range []string{"a < b & c", "<b>x</b>", "&amp;", "one\n\ntwo", "<script>x</script>", "a<br>b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.TrimSpace(collapseNewlines(strings.ReplaceAll(s, "\r", "")))
		if !utf8.ValidString(s) {
			return
		}
		if got := plainText(textHTML(s)); got != s {
			t.Fatalf("plainText(textHTML(%q)) = %q", s, got)
		}
	})
}

func TestSplitAPIPath(t *testing.T) {
	tests := []struct {
		path    string
		version int
		key     string
		parts   string
		ok      bool
	}{
		{"/api/k/re/1", 1, "k", "re/1", true},
		{"/api2/k/re/1/", 2, "k", "re/1", true},
		{"/api1/k", 1, "k", "", true},
		{"/api3/k/re", 0, "", "", false},
		{"/api/", 0, "", "", false},
		{"/api", 0, "", "", false},
		{"/api/k x/re", 1, "k x", "re", true},
		{"/api/k/re//1", 0, "", "", false},
		{"/apis/k/re", 0, "", "", false},
		{"/other", 0, "", "", false},
	}
	for _, tt := range tests {
		v, _, key, parts, ok := splitAPIPath(tt.path)
		if ok != tt.ok || v != tt.version || key != tt.key || strings.Join(parts, "/") != tt.parts {
			t.Errorf("splitAPIPath(%q) = %d %q %q %v, want %d %q %q %v", tt.path, v, key, parts, ok,
				tt.version, tt.key, tt.parts, tt.ok)
		}
	}
}
