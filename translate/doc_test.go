package translate

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// TestDocExamples checks every XML/JSON example pair of docs/json.md, both ways.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	pairs := regexp.MustCompile("(?s)```xml\n(.*?)```\n\n```json\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(pairs) < 14 {
		t.Fatalf("found %d example pairs in docs/json.md, want at least 14", len(pairs))
	}
	for _, p := range pairs {
		x, js := p[1], p[2]
		var want bytes.Buffer
		if err := json.Compact(&want, js); err != nil {
			t.Fatalf("example JSON: %v\n%s", err, js)
		}
		got, err := XMLToJSON(x)
		if err != nil {
			t.Fatalf("XMLToJSON: %v\n%s", err, x)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("XMLToJSON of the example\n%s\n got %s\nwant %s", x, got, want.Bytes())
		}
		back, err := JSONToXML(js)
		if err != nil {
			t.Fatalf("JSONToXML: %v\n%s", err, js)
		}
		a, err := canonical(x)
		if err != nil {
			t.Fatal(err)
		}
		b, err := canonical(back)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(a, b, ""); d != "" {
			t.Errorf("JSONToXML of the example differs at %s\n%s", d, back)
		}
	}
}
