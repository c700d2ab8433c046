package translate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenCase is one shape of the interface: testdata/<name>.xml and testdata/<name>.json side by side.
type goldenCase struct {
	name      string
	xml, json []byte // json compacted, keys in the order of the file
}

func loadGolden(tb testing.TB) []goldenCase {
	tb.Helper()
	files, err := filepath.Glob("testdata/*.xml")
	if err != nil {
		tb.Fatal(err)
	}
	var cases []goldenCase
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".xml")
		x, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		j, err := os.ReadFile(strings.TrimSuffix(f, ".xml") + ".json")
		if err != nil {
			tb.Fatalf("%s: the JSON side is missing: %v", name, err)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, j); err != nil {
			tb.Fatalf("%s.json: %v", name, err)
		}
		cases = append(cases, goldenCase{name: name, xml: x, json: buf.Bytes()})
	}
	if len(cases) == 0 {
		tb.Fatal("no golden files in testdata")
	}
	return cases
}

// TestGoldenXMLToJSON checks every shape's XML against its expected JSON, byte for byte (key order
// included).
func TestGoldenXMLToJSON(t *testing.T) {
	for _, c := range loadGolden(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := XMLToJSON(c.xml)
			if err != nil {
				t.Fatalf("XMLToJSON: %v", err)
			}
			if want := c.json; !bytes.Equal(got, want) {
				t.Errorf("XMLToJSON:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestGoldenJSONToXML checks every shape's JSON against its expected XML, read by encoding/xml (an
// independent reader), in document order.
func TestGoldenJSONToXML(t *testing.T) {
	for _, c := range loadGolden(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := JSONToXML(c.json)
			if err != nil {
				t.Fatalf("JSONToXML: %v", err)
			}
			gotDoc, err := canonical(got)
			if err != nil {
				t.Fatalf("JSONToXML wrote XML that encoding/xml cannot read: %v\n%s", err, got)
			}
			wantDoc, err := canonical(c.xml)
			if err != nil {
				t.Fatalf("golden XML: %v", err)
			}
			if d := diff(gotDoc, wantDoc, ""); d != "" {
				t.Errorf("JSONToXML differs from %s.xml at %s\n%s", c.name, d, got)
			}
		})
	}
}

// TestGoldenRoundTrip checks XML -> JSON -> XML and JSON -> XML -> JSON over every shape.
func TestGoldenRoundTrip(t *testing.T) {
	for _, c := range loadGolden(t) {
		t.Run(c.name, func(t *testing.T) {
			js, err := XMLToJSON(c.xml)
			if err != nil {
				t.Fatal(err)
			}
			back, err := JSONToXML(js)
			if err != nil {
				t.Fatal(err)
			}
			a, err := canonical(c.xml)
			if err != nil {
				t.Fatal(err)
			}
			b, err := canonical(back)
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(a, b, ""); d != "" {
				t.Errorf("XML -> JSON -> XML differs at %s\n%s", d, back)
			}
			x, err := JSONToXML(c.json)
			if err != nil {
				t.Fatal(err)
			}
			js2, err := XMLToJSON(x)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := js2, c.json; !bytes.Equal(got, want) {
				t.Errorf("JSON -> XML -> JSON:\n got %s\nwant %s", got, want)
			}
		})
	}
}
