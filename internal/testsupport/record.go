package testsupport

import (
	"encoding/xml"
	"testing"
)

// RecordValues decodes a record as the core writes it (<fields><field><name>…</name><value>…</value>) into the
// text of each field's <value> by field name. It ends the test if doc is no such document.
func RecordValues(tb testing.TB, doc string) map[string]string {
	tb.Helper()
	var rec struct {
		Fields []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"fields>field"`
	}
	if err := xml.Unmarshal([]byte(doc), &rec); err != nil {
		tb.Fatalf("decode record: %v\n%s", err, doc)
	}
	m := make(map[string]string, len(rec.Fields))
	for _, f := range rec.Fields {
		m[f.Name] = f.Value
	}
	return m
}
