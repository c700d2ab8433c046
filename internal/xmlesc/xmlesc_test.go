package xmlesc

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestAppend(t *testing.T) {
	tests := []struct{ in, text, attr string }{
		{"", "", ""},
		{"plain", "plain", "plain"},
		{`<a href="x">&'`, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;", "&lt;a href=&quot;x&quot;&gt;&amp;&apos;"},
		{"line\nnext\ttab\r", "line\nnext\ttab&#xD;", "line&#xA;next&#x9;tab&#xD;"},
		{"crlf\r\n", "crlf&#xD;\n", "crlf&#xD;&#xA;"},
		{"bell\x07nul\x00", "bell\uFFFDnul\uFFFD", "bell\uFFFDnul\uFFFD"},
		{"bad \xff utf8", "bad \uFFFD utf8", "bad \uFFFD utf8"},
		{"cut \xe2\x82", "cut \uFFFD\uFFFD", "cut \uFFFD\uFFFD"},
		{"ünïcødé 😀 \u007f", "ünïcødé 😀 \u007f", "ünïcødé 😀 \u007f"},
		{"\uFFFE\uFFFF", "\uFFFD\uFFFD", "\uFFFD\uFFFD"},
		{"\uFFFD stays", "\uFFFD stays", "\uFFFD stays"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", "\uFFFD\uFFFD\uFFFD"}, // a surrogate, which UTF-8 cannot encode
	}
	for _, tt := range tests {
		if got := string(Append(nil, tt.in, false)); got != tt.text {
			t.Errorf("text escape of %q = %q, want %q", tt.in, got, tt.text)
		}
		if got := string(Append(nil, tt.in, true)); got != tt.attr {
			t.Errorf("attribute escape of %q = %q, want %q", tt.in, got, tt.attr)
		}
		if got := string(Append([]byte("x"), []byte(tt.in), true)); got != "x"+tt.attr {
			t.Errorf("attribute escape of %q as bytes after x = %q, want %q", tt.in, got, "x"+tt.attr)
		}
	}
}

func TestAppendStrict(t *testing.T) {
	tests := []struct {
		in, out string
		bad     int
	}{
		{"a<b\r", "a&lt;b&#xD;", -1},
		{"ok\x01rest", "ok", 2},
		{"&\xffrest", "&amp;", 1},
		{"ab\uFFFE", "ab", 2},
		{"é\x00", "é", 2},
	}
	for _, tt := range tests {
		out, bad := AppendStrict(nil, []byte(tt.in), false)
		if string(out) != tt.out || bad != tt.bad {
			t.Errorf("AppendStrict(%q) = %q, %d; want %q, %d", tt.in, out, bad, tt.out, tt.bad)
		}
	}
}

// What Append writes reads back, through an independent XML reader, as the text it was given (after the
// replacement of characters XML cannot carry), in character data and in attributes.
func TestRoundTrip(t *testing.T) {
	for _, in := range []string{"", "a", "<b>bold</b> & co", "tab\tline\nend", "crlf\r\nend", "lone\rcr", "\r\r\n\n",
		`"quoted" 'single'`, "\x01ctl", "ünï 😀"} {
		doc := []byte(`<t a="`)
		doc = Append(doc, in, true)
		doc = append(doc, `">`...)
		doc = Append(doc, in, false)
		doc = append(doc, "</t>"...)
		var v struct {
			A    string `xml:"a,attr"`
			Text string `xml:",chardata"`
		}
		if err := xml.Unmarshal(doc, &v); err != nil {
			t.Fatalf("%q: %s does not parse: %v", in, doc, err)
		}
		want := strings.ReplaceAll(in, "\x01", "\uFFFD")
		if v.A != want || v.Text != want {
			t.Errorf("%q read back as attribute %q, text %q", in, v.A, v.Text)
		}
	}
}

func TestAppendAllocs(t *testing.T) {
	in := []byte(`ünï <b> 😀 & "x" ` + "\x01")
	str := string(in)
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { Append(dst, in, true) }); n != 0 {
		t.Errorf("Append of bytes allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { Append(dst, str, true) }); n != 0 {
		t.Errorf("Append of a string allocates %v times", n)
	}
}

func BenchmarkAppend(b *testing.B) {
	in := strings.Repeat("Plain text of a requirement, with <markup> & ünïcødé. ", 20)
	dst := make([]byte, 0, 2*len(in))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		dst = Append(dst[:0], in, false)
	}
}
