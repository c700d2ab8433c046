package testsupport

import (
	"encoding/json"
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

// JSONRecordValues decodes a record in its JSON form ({root: {"fields": {"field": [{"name": …, "value": …}]}}},
// root the record's element, "requirement" for a requirement) into each field's value by field name, as
// encoding/json reads it (a string, a number, an object…). A document of another root has no fields. It ends
// the test if doc is not JSON of that shape.
func JSONRecordValues(tb testing.TB, doc, root string) map[string]any {
	tb.Helper()
	var rec map[string]struct {
		Fields struct {
			Field []struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
			} `json:"field"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(doc), &rec); err != nil {
		tb.Fatalf("decode JSON record: %v\n%s", err, doc)
	}
	fields := rec[root].Fields.Field
	m := make(map[string]any, len(fields))
	for _, f := range fields {
		m[f.Name] = f.Value
	}
	return m
}
