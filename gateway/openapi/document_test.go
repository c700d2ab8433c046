package openapi_test

import (
	"encoding/json"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/reqgate/reqgate/gateway/openapi"
)

// newValidator reads the document with libopenapi and returns a validator of requests and responses.
func newValidator(tb testing.TB) validator.Validator {
	tb.Helper()
	doc, err := libopenapi.NewDocument(openapi.JSON())
	if err != nil {
		tb.Fatalf("libopenapi.NewDocument: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		tb.Fatalf("validator.NewValidator: %v", errs)
	}
	return v
}

// TestDocumentValid validates the document against the OpenAPI 3.1 specification's schema, and checks that
// libopenapi builds a model of it with every path of the route table.
func TestDocumentValid(t *testing.T) {
	v := newValidator(t)
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s (%s)", e.Message, e.Reason, e.SpecPath)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s", se.Reason, se.KeywordLocation)
			}
		}
	}
	doc, err := libopenapi.NewDocument(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("BuildV3Model: %v", err)
	}
	if got := m.Model.Version; got != "3.1.0" {
		t.Errorf("openapi=%q, want 3.1.0", got)
	}
	for _, r := range openapi.Routes() {
		item, ok := m.Model.Paths.PathItems.Get(r.Template)
		if !ok {
			t.Errorf("%s %s: not in the document", r.Method, r.Template)
			continue
		}
		if item.GetOperations().GetOrZero(lower(r.Method)) == nil {
			t.Errorf("%s %s: no operation", r.Method, r.Template)
		}
	}
	var anyDoc map[string]any
	if err := json.Unmarshal(openapi.JSON(), &anyDoc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
