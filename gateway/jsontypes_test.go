package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestJSONTypesIndependentOfData reads every kind of document through the gateway in JSON, versions 1 and 2,
// lists and single reads, with values set and the same values empty, and checks the promise of docs/json.md
// (rule 10): at each place of a document a value has one JSON type, and an empty value is that type (an empty
// string, an empty list) or null, never a value of another type (such as "" where a set value is an object or
// a number). The empty values are written by a JSON client as null, [] and "", which must clear them.
func TestJSONTypesIndependentOfData(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, withConfig(Options{Upstreams: []string{c.URL}}))
	v2 := gw.URL + "/api2/demo/"
	v1 := gw.URL + "/api/demo/"

	// A risk (a custom object with a field of every type) and a requirement, each with every value set, and
	// with every value empty.
	riskSet := map[string]any{"field_402": 3, "field_403": "2025-03-31", "field_404": 1, "field_405": "0.4",
		"field_406": "risk@reqgate.test", "field_407": "https://status.example.com", "field_408": "notes",
		"field_409": 7, "field_410": "<p>a <b>plan</b></p>", "field_411": 3, "field_412": "1,3", "field_413": "2,4"}
	riskEmpty := map[string]any{"field_402": nil, "field_403": nil, "field_404": []any{}, "field_405": "",
		"field_406": nil, "field_407": "", "field_408": "", "field_409": nil, "field_410": "", "field_411": nil,
		"field_412": []any{}, "field_413": map[string]any{"value": []any{}}}
	reSet := map[string]any{"field_102": "<p>why</p>", "field_103": 2, "field_104": 3, "field_105": 1,
		"field_106": "1,3", "version_comment": "first"}
	reEmpty := map[string]any{"field_102": nil, "field_103": nil, "field_104": []any{}, "field_105": nil,
		"field_106": []any{}}

	riskFull := createJSON(t, v2+"risk", "custom_object", "full risk", riskSet)
	riskBare := createJSON(t, v2+"risk", "custom_object", "bare risk", riskEmpty)
	reFull := createJSON(t, v2+"re", "requirement", "full requirement", reSet)
	reBare := createJSON(t, v2+"re", "requirement", "bare requirement", reEmpty)
	// A history of every field from empty to set and back.
	updateJSON(t, v2+"risk/"+riskBare, "custom_object", riskSet)
	updateJSON(t, v2+"risk/"+riskBare, "custom_object", riskEmpty)
	updateJSON(t, v2+"re/"+reBare, "requirement", reSet)
	updateJSON(t, v2+"re/"+reBare, "requirement", reEmpty)

	// The JSON writes of null, [] and {"value": []} cleared every value: the XML read has them all empty.
	for _, rd := range []struct{ url, prefix string }{{v2 + "risk/" + riskBare, "field_4"}, {v2 + "re/" + reBare, "field_10"}} {
		xml := get(t, rd.url).Body
		for _, f := range strings.Split(xml, "<field>")[1:] {
			if strings.Contains(f, "<name>"+rd.prefix) && !strings.Contains(f, "<name>field_401</name>") &&
				!strings.Contains(f, "<name>field_101</name>") && !strings.Contains(f, "<value />") &&
				!strings.Contains(f, "<value><![CDATA[]]></value>") {
				t.Errorf("%s: a field written empty is not empty:\n%s", rd.url, f)
			}
		}
	}

	groups := []struct {
		name string
		urls []string
	}{
		{"risk record", []string{v2 + "risk/" + riskFull, v2 + "risk/" + riskBare}},
		{"requirement record", []string{v2 + "re/" + reFull, v2 + "re/" + reBare, v2 + "re/1"}},
		{"requirement record, version 1", []string{v1 + "re/" + reFull, v1 + "re/" + reBare, v1 + "re/1"}},
		{"field list", []string{v2 + "re/field", v2 + "ft/field", v2 + "risk/field"}},
		{"field list, version 1", []string{v1 + "re/field", v1 + "uc/field"}},
		{"users", []string{v2 + "user", v2 + "user/team@reqgate.test", v1 + "user"}},
		{"user", []string{v2 + "user/1", v2 + "user/3", v1 + "user/2"}},
		{"objects", []string{v2 + "object"}},
		{"views", []string{v2 + "re/view", v2 + "risk/view", v2 + "uc/view"}},
		{"view contents", []string{v2 + "re/view/1", v2 + "risk/view/2", v2 + "re/view/1/search?field_103=3"}},
		{"search", []string{v2 + "re/search?field_103=1", v2 + "risk/search?field_402=1", v2 + "ft/search?field_203=3"}},
		{"related", []string{v2 + "re/1/related", v2 + "re/" + reFull + "/related", v2 + "risk/1/related"}},
		{"error", []string{v2 + "re/999999", v2 + "re/search?field_999=1", v1 + "object"}},
	}
	for id := 402; id <= 413; id++ {
		groups = append(groups, struct {
			name string
			urls []string
		}{"risk field history " + strconv.Itoa(id), []string{v2 + "risk/" + riskBare + "/fieldhistory/" + strconv.Itoa(id)}})
	}
	for id := 102; id <= 106; id++ {
		groups = append(groups, struct {
			name string
			urls []string
		}{"requirement field history " + strconv.Itoa(id), []string{v2 + "re/" + reBare + "/fieldhistory/" + strconv.Itoa(id)}})
	}

	seen := typeMap{}
	for _, g := range groups {
		types := typeMap{}
		for _, u := range g.urls {
			res := get(t, u, "Accept: application/json")
			var doc any
			if err := json.Unmarshal([]byte(res.Body), &doc); err != nil {
				t.Fatalf("%s: status %d, not JSON: %v\n%s", u, res.Status, err, res.Body)
			}
			types.add("", doc)
		}
		for path, ts := range types {
			if set := slices.DeleteFunc(slices.Clone(ts), func(s string) bool { return s == "null" }); len(set) > 1 {
				t.Errorf("%s: %s has the types %v", g.name, path, ts)
			}
			seen[g.name+" "+path] = ts
		}
	}

	// The documents held empty values where they are null and where they stay text, so the walk above
	// compared set and empty forms of each (and not only set ones).
	for _, want := range []struct{ path, types string }{
		{"risk record /custom_object/fields/field[field_402]/value", "null object"},
		{"risk record /custom_object/fields/field[field_411]/value", "null object"},
		{"risk record /custom_object/fields/field[field_412]/value", "null object"},
		{"risk record /custom_object/fields/field[field_413]/value", "null object"},
		{"risk record /custom_object/fields/field[field_408]/value", "string"},
		{"risk record /custom_object/fields/field[]/sort", "null number"},
		{"requirement record, version 1 /requirement/fields/field[field_106]/value", "null object"},
		{"requirement record, version 1 /requirement/fields/field[field_102]/value", "string"},
		{"field list /requirement_fields/fields/field[]/max_size", "null number"},
		{"field list /requirement_fields/fields/field[]/picklist_options/option[]/value", "null number"},
		{"risk field history 402 /history_items/history[]/old_value", "null object"},
		{"risk field history 403 /history_items/history[]/new_value", "null object"},
		{"risk field history 404 /history_items/history[]/old_value", "null object"},
		{"risk field history 412 /history_items/history[]/new_value", "null object"},
		{"risk field history 408 /history_items/history[]/old_value", "null string"},
	} {
		if got := strings.Join(seen[want.path], " "); got != want.types {
			t.Errorf("%s: types %q, want %q", want.path, got, want.types)
		}
	}
}

// typeMap is the JSON types (null, boolean, number, string, array, object) found at each place of documents.
// A place is the path of keys, "[]" for an item of an array; the value of a record's field is a place of
// its own per field ("field[field_103]/value"), since its type is that of the field, while the other members
// of a field are the same for all fields.
type typeMap map[string][]string

func (m typeMap) add(path string, v any) {
	m.note(path, jsonType(v))
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			m.add(path+"/"+k, c)
		}
	case []any:
		for _, item := range v {
			obj, ok := item.(map[string]any)
			if !strings.HasSuffix(path, "/field") || !ok {
				m.add(path+"[]", item)
				continue
			}
			for k, c := range obj {
				p := path + "[]/" + k
				if name, ok := obj["name"].(string); ok && k == "value" {
					p = path + "[" + name + "]/" + k
				}
				m.add(p, c)
			}
		}
	}
}

func (m typeMap) note(path, typ string) {
	if !slices.Contains(m[path], typ) {
		m[path] = append(m[path], typ)
		sort.Strings(m[path])
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// fieldsJSON is the JSON write body of root with a title and values (field name to JSON value).
func fieldsJSON(t *testing.T, root, title string, values map[string]any) string {
	t.Helper()
	var fields []map[string]any
	if title != "" {
		name := "field_401"
		if root == "requirement" {
			name = "field_101"
		}
		fields = append(fields, map[string]any{"name": name, "value": title})
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fields = append(fields, map[string]any{"name": n, "value": values[n]})
	}
	b, err := json.Marshal(map[string]any{root: map[string]any{"fields": map[string]any{"field": fields}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// createJSON POSTs a JSON record and returns its id.
func createJSON(t *testing.T, url, root, title string, values map[string]any) string {
	t.Helper()
	res := do(t, http.MethodPost, url, "demo", "demo", fieldsJSON(t, root, title, values),
		"Content-Type: application/json", "Accept: application/json")
	if res.Status != http.StatusCreated {
		t.Fatalf("POST %s: status %d: %s", url, res.Status, res.Body)
	}
	loc := res.Header.Get("Location")
	return loc[strings.LastIndexByte(loc, '/')+1:]
}

// updateJSON PUTs JSON values to a record.
func updateJSON(t *testing.T, url, root string, values map[string]any) {
	t.Helper()
	res := do(t, http.MethodPut, url, "demo", "demo", fieldsJSON(t, root, "", values),
		"Content-Type: application/json", "Accept: application/json")
	if res.Status != http.StatusOK {
		t.Fatalf("PUT %s: status %d: %s", url, res.Status, res.Body)
	}
}
