package wire

import (
	"encoding/xml"
	"testing"
)

// TestErrorXML pins the error document of docs/api.md (Errors), which the core and the gateway both write, and
// checks that every message, whatever it holds, comes back from an XML reader as it was sent (or with U+FFFD
// where XML cannot carry a character).
func TestErrorXML(t *testing.T) {
	const want = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<error>\n<message>The requested resource does not exist.</message>\n</error>\n"
	if got := string(ErrorXML("The requested resource does not exist.")); got != want {
		t.Errorf("ErrorXML:\n%q\nwant\n%q", got, want)
	}
	if got, want := string(ErrorXML("")), "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<error>\n<message />\n</error>\n"; got != want {
		t.Errorf("ErrorXML(\"\"):\n%q\nwant\n%q", got, want)
	}
	for msg, read := range map[string]string{
		`a <b> & "c" 'd'`:  `a <b> & "c" 'd'`,
		"line\r\nend\ttab": "line\r\nend\ttab",
		"bell\x07 bad\xff": "bell\uFFFD bad\uFFFD",
		"ünïcødé 😀":        "ünïcødé 😀",
		"]]> </message>":   "]]> </message>",
	} {
		var doc struct {
			XMLName xml.Name `xml:"error"`
			Message string   `xml:"message"`
		}
		if err := xml.Unmarshal(AppendErrorXML([]byte(nil), msg), &doc); err != nil {
			t.Fatalf("ErrorXML(%q) does not parse: %v", msg, err)
		}
		if doc.Message != read {
			t.Errorf("ErrorXML(%q) reads back as %q, want %q", msg, doc.Message, read)
		}
	}
}
