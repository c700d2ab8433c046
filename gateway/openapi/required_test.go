package openapi_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/gateway/openapi"
)

// pointer resolves a JSON Pointer (RFC 6901, "~1" for "/") in the document, following $ref on the way.
func pointer(t *testing.T, doc map[string]any, p string) map[string]any {
	t.Helper()
	cur := any(doc)
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if list, ok := cur.([]any); ok {
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(list) {
				t.Fatalf("%s: no item %q", p, tok)
			}
			cur = list[i]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%s: %q is not in an object", p, tok)
		}
		if r, ok := m["$ref"].(string); ok {
			m = pointer(t, doc, strings.TrimPrefix(r, "#"))
		}
		cur = m[strings.ReplaceAll(tok, "~1", "/")]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("%s: no object there", p)
	}
	if r, ok := m["$ref"].(string); ok {
		return pointer(t, doc, strings.TrimPrefix(r, "#"))
	}
	return m
}

func decodeDocument(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openapi.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestRequiredKeys checks that what every response has is marked required, so that a generated client types
// it as present (the end-to-end tests validate the responses against these lists, so none promises too much).
func TestRequiredKeys(t *testing.T) {
	doc := decodeDocument(t)
	summary := []string{"id", "id_prefix", "title", "version_number", "created_time", "last_updated_time", "created_by", "last_updated_by"}
	tests := []struct {
		name, schema string
		want         []string
	}{
		{"record read", "/components/schemas/requirement_document/properties/requirement", []string{"fields"}},
		{"field of a record read", "/components/schemas/requirement/properties/fields/properties/field/items", []string{"name", "label", "value", "sort"}},
		{"field list", "/components/schemas/requirement_fields", []string{"fields"}},
		{"field definition", "/components/schemas/requirement_fields/properties/fields/properties/field/items",
			[]string{"name", "label", "type", "sort", "help", "required", "default_value", "max_size", "special_purpose"}},
		{"picklist option", "/components/schemas/requirement_fields/properties/fields/properties/field/items/properties/picklist_options/properties/option/items",
			[]string{"value", "label", "desc", "option_sort", "option_default"}},
		{"search result", "/components/schemas/search_results/properties/requirement/items", summary},
		{"view contents", "/components/schemas/view/properties/custom_object/items", summary},
		{"related item", "/components/schemas/relationships/properties/features/properties/feature/items", append([]string{"relationship_type"}, summary...)},
		{"relationships", "/components/schemas/relationships", []string{"@id_prefix", "@id"}},
		{"timestamp", "/components/schemas/search_results/properties/feature/items/properties/created_time", []string{"@unit", "#text"}},
		{"user", "/components/schemas/user", []string{"user_id", "email", "username", "firstname", "lastname", "deleted", "status"}},
		{"object", "/components/schemas/objects/properties/object/items",
			[]string{"object_unique_id", "api_prefix", "name_singular", "name_plural", "description", "id_prefix", "custom_object", "deploy_status"}},
		{"view of the list", "/components/schemas/views/properties/view/items", []string{"view_id", "name", "description", "created_by_firstname", "created_by_lastname"}},
		{"history change", "/components/schemas/history_items/properties/history/items", []string{"user_id", "action", "old_value", "new_value", "activity_time"}},
		{"error", "/components/schemas/error", []string{"message"}},
		{"throttle status", "/components/schemas/rate_throttle_status", []string{"api_available"}},
		{"field to write", "/components/schemas/requirement_write/properties/fields/properties/field/anyOf/1", []string{"name", "value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := pointer(t, doc, tt.schema)
			var got []string
			req, _ := s["required"].([]any)
			for _, k := range req {
				got = append(got, k.(string))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("required %v, want %v", got, tt.want)
			}
		})
	}
	// A timestamp always has its unit: it is an object, never the number alone.
	if ts := pointer(t, doc, "/components/schemas/requirement_summary/properties/created_time"); ts["type"] != "object" {
		t.Errorf("a summary's created_time is %v, want an object", ts)
	}
}

// TestSearchParameters checks the parameters of every search: the conditions a generated client can send as
// name=value pairs (created_by, last_updated_by, field_conditions in form style, exploded) and q, one condition
// of the language per value, whose pattern takes the time comparisons (no deleted_time in a view search).
func TestSearchParameters(t *testing.T) {
	doc := decodeDocument(t)
	paths := doc["paths"].(map[string]any)
	searches := 0
	for p := range paths {
		if !strings.HasSuffix(p, "/search") {
			continue
		}
		searches++
		view := strings.Contains(p, "/view/")
		params := map[string]map[string]any{}
		for _, r := range pointer(t, doc, "/paths/"+strings.ReplaceAll(p, "/", "~1")+"/get")["parameters"].([]any) {
			prm := pointer(t, doc, strings.TrimPrefix(r.(map[string]any)["$ref"].(string), "#"))
			params[prm["name"].(string)] = prm
		}
		for _, name := range []string{"created_by", "last_updated_by", "field_conditions", "q"} {
			if params[name] == nil {
				t.Errorf("%s: no parameter %s", p, name)
			}
		}
		q := params["q"]
		if q == nil {
			continue
		}
		if q["in"] != "query" || q["style"] != "form" || q["explode"] != true || q["schema"].(map[string]any)["type"] != "array" {
			t.Errorf("%s: q is %v, want a query array in form style, exploded", p, q)
		}
		if fc := params["field_conditions"]; fc["style"] != "form" || fc["explode"] != true {
			t.Errorf("%s: field_conditions is %v, want form style, exploded", p, fc)
		}
		pattern := regexp.MustCompile(q["schema"].(map[string]any)["items"].(map[string]any)["pattern"].(string))
		for cond, want := range map[string]bool{
			"created_time>1262493473": true, "last_updated_time<9999999999": true, "deleted_time>1000000000": !view,
			"created_by=1": true, "field_103=2": true, "field_101=Export": true,
			"created_time>=1262493473": false, "created_time>12345": false, "field_103": false, "title=x": false,
		} {
			if got := pattern.MatchString(cond); got != want {
				t.Errorf("%s: q pattern matches %q: %v, want %v", p, cond, got, want)
			}
		}
	}
	if searches == 0 {
		t.Fatal("no search path in the document")
	}
}
