package corecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/translate"
	"github.com/reqgate/reqgate/translate/internal/xmlcanon"
)

// TestRealCoreRoundTrip reads every resource of the demo account from the real core (SQLite store and XML
// API on a loopback port) and checks that each body translates to JSON and back to the same document, in
// the core's own element order (no regrouping allowed), and that translating again changes nothing.
func TestRealCoreRoundTrip(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	get := func(path string) (int, []byte) {
		t.Helper()
		r := request(t, c, http.MethodGet, path, nil)
		return r.Status, []byte(r.Body)
	}
	roots := map[string]int{}
	check := func(path string, body []byte) []byte {
		t.Helper()
		js, err := translate.XMLToJSON(body)
		if err != nil {
			t.Fatalf("GET %s: XMLToJSON: %v\n%s", path, err, body)
		}
		back, err := translate.JSONToXML(js)
		if err != nil {
			t.Fatalf("GET %s: JSONToXML: %v\n%s", path, err, js)
		}
		a, err := canonical(body)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, err := canonical(back)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if d := diff(a, b, ""); d != "" {
			t.Errorf("GET %s: XML -> JSON -> XML differs at %s\ncore: %s\nback: %s", path, d, body, back)
		}
		js2, err := translate.XMLToJSON(back)
		if err != nil || string(js2) != string(js) {
			t.Errorf("GET %s: second translation differs: %v\n%s\n%s", path, err, js, js2)
		}
		roots[a.Name]++
		return js
	}
	fetch := func(path string) []byte {
		t.Helper()
		status, body := get(path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: status %d\n%s", path, status, body)
		}
		return check(path, body)
	}

	const base = "/api2/demo"
	var objects struct {
		Objects struct {
			Object []struct {
				APIPrefix string `json:"api_prefix"`
			} `json:"object"`
		} `json:"objects"`
	}
	mustDecode(t, fetch(base+"/object"), &objects)
	fetch(base + "/user")
	fetch(base + "/user/1")
	fetch(base + "/user/team@reqgate.test")
	for _, o := range objects.Objects.Object {
		seg := base + "/" + o.APIPrefix
		var fieldDoc map[string]map[string]map[string][]map[string]any
		mustDecode(t, fetch(seg+"/field"), &fieldDoc)
		var fieldIDs []string
		for _, root := range fieldDoc {
			for _, f := range root["fields"]["field"] {
				if id, ok := f["id"].(float64); ok {
					fieldIDs = append(fieldIDs, fmt.Sprint(int64(id)))
				}
			}
		}
		var views map[string]map[string][]map[string]any
		mustDecode(t, fetch(seg+"/view"), &views)
		for _, v := range views["views"]["view"] {
			id := fmt.Sprint(int64(v["view_id"].(float64)))
			fetch(seg + "/view/" + id)
			fetch(seg + "/view/" + id + "/search?created_by=1")
		}
		fetch(seg + "/search?created_by=1")
		fetch(seg + "/search?last_updated_time>1000000000")
		for id := 1; id <= 40; id++ {
			rec := fmt.Sprintf("%s/%d", seg, id)
			status, body := get(rec)
			if status == http.StatusNotFound {
				check(rec, body) // the error body
				continue
			}
			if status != http.StatusOK {
				t.Fatalf("GET %s: status %d", rec, status)
			}
			check(rec, body)
			fetch(rec + "/related")
			for _, f := range fieldIDs {
				fetch(rec + "/fieldhistory/" + f)
			}
			if o.APIPrefix == "re" || o.APIPrefix == "ft" || o.APIPrefix == "uc" {
				fetch(fmt.Sprintf("/api/demo/%s/%d", o.APIPrefix, id)) // version 1: plain text
			}
		}
	}
	var seen []string
	for r, n := range roots {
		seen = append(seen, fmt.Sprintf("%s=%d", r, n))
	}
	sort.Strings(seen)
	t.Logf("documents by root: %s", strings.Join(seen, " "))
	for _, want := range []string{"objects", "users", "user", "requirement", "feature", "use_case", "custom_object",
		"requirement_fields", "views", "view", "search_results", "relationships", "history_items", "error"} {
		if roots[want] == 0 {
			t.Errorf("the demo account gave no <%s> document", want)
		}
	}
}

func mustDecode(t *testing.T, js []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(js, v); err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
}

// TestRealCoreWrite sends a record written as JSON (translated by JSONToXML, keys in a client's order) to
// the real core and reads it back as JSON.
func TestRealCoreWrite(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	res := request(t, c, http.MethodGet, "/api2/demo/re/field", nil)
	js, err := translate.XMLToJSON([]byte(res.Body))
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("field list: %d %v", res.Status, err)
	}
	var fields struct {
		RF struct {
			Fields struct {
				Field []struct {
					Name    string `json:"name"`
					Special string `json:"special_purpose"`
				} `json:"field"`
			} `json:"fields"`
		} `json:"requirement_fields"`
	}
	mustDecode(t, js, &fields)
	title := ""
	for _, f := range fields.RF.Fields.Field {
		if f.Special == "title" {
			title = f.Name
		}
	}
	if title == "" {
		t.Fatal("no title field in the demo account")
	}
	const value = `Export & import <CSV> "quoted" 'single' – 日本 ]]> 02134`
	in := fmt.Sprintf(`{"requirement":{"fields":{"field":[{"value":%q,"name":%q},{"value":"via JSON","name":"version_comment"}]}}}`,
		value, title)
	x, err := translate.JSONToXML([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	res = request(t, c, http.MethodPost, "/api2/demo/re", x)
	if res.Status != http.StatusCreated {
		t.Fatalf("create: status %d\n%s\nsent %s", res.Status, res.Body, x)
	}
	loc := res.Header.Get("Location")
	path := loc[strings.Index(loc, "/api2/"):]
	res = request(t, c, http.MethodGet, path, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("read %s: %d", path, res.Status)
	}
	js, err = translate.XMLToJSON([]byte(res.Body))
	if err != nil {
		t.Fatal(err)
	}
	got := testsupport.JSONRecordValues(t, string(js), "requirement")
	if got[title] != value {
		t.Errorf("title read back %q, want %q", got[title], value)
	}
	if got["version_comment"] != "via JSON" {
		t.Errorf("version_comment read back %q", got["version_comment"])
	}
}

// request sends an XML body (or none) to the core as the demo user and returns the response, read whole.
func request(t *testing.T, c *coretest.Core, method, path string, body []byte) testsupport.Reply {
	t.Helper()
	return testsupport.Do(t, http.DefaultClient, method, c.URL+path, "demo", "demo", string(body))
}

// Carriage returns in JSON strings survive a record write and read through the real core unchanged: JSON
// -> XML -> core -> XML -> JSON gives the same strings, and the XML reads decode (encoding/xml) to them
// too. XML readers turn a literal CR into LF, so this holds only if every XML on the way carries a CR as
// a reference, CDATA included (the core writes Textarea values as CDATA in version 2).
func TestRealCoreCarriageReturns(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	want := map[string]string{
		"field_101":       "crlf\r\nand lone\rcr",
		"field_102":       "<p>one</p>\r\n<p>two ]]> two</p>\rthree\r",
		"version_comment": "\r\nwhy\r",
	}
	in, err := json.Marshal(map[string]any{"requirement": map[string]any{"fields": map[string]any{"field": []any{
		map[string]string{"name": "field_101", "value": want["field_101"]},
		map[string]string{"name": "field_102", "value": want["field_102"]},
		map[string]string{"name": "version_comment", "value": want["version_comment"]},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := translate.JSONToXML(in)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.IndexByte(x, '\r') >= 0 {
		t.Errorf("JSONToXML wrote a literal carriage return:\n%q", x)
	}
	res := request(t, c, http.MethodPost, "/api2/demo/re", x)
	if res.Status != http.StatusCreated {
		t.Fatalf("create: status %d\n%s\nsent %s", res.Status, res.Body, x)
	}
	loc := res.Header.Get("Location")
	id := loc[strings.LastIndexByte(loc, '/')+1:]

	for _, path := range []string{"/api2/demo/re/" + id, "/api/demo/re/" + id} {
		res := request(t, c, http.MethodGet, path, nil)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: status %d\n%s", path, res.Status, res.Body)
		}
		body := []byte(res.Body)
		fromXML := testsupport.RecordValues(t, res.Body)
		js, err := translate.XMLToJSON(body)
		if err != nil {
			t.Fatalf("GET %s: XMLToJSON: %v\n%s", path, err, body)
		}
		fromJSON := jsonValues(t, js)
		for name, v := range want {
			if name == "field_102" && strings.HasPrefix(path, "/api/") {
				// Version 1 shows a Textarea as plain text made from its HTML: JSON must still read
				// what XML decodes, carriage returns included.
				if !strings.Contains(fromXML[name], "\r") {
					t.Errorf("GET %s: %s lost its carriage returns: %q", path, name, fromXML[name])
				}
				v = fromXML[name]
			}
			if fromXML[name] != v {
				t.Errorf("GET %s: %s decodes from XML as %q, want %q\n%s", path, name, fromXML[name], v, body)
			}
			if fromJSON[name] != v {
				t.Errorf("GET %s: %s reads from JSON as %q, want %q\n%s", path, name, fromJSON[name], v, js)
			}
		}
	}
}

// jsonValues decodes the JSON form of a requirement read into its string values by field name.
func jsonValues(t *testing.T, js []byte) map[string]string {
	t.Helper()
	m := map[string]string{}
	for name, v := range testsupport.JSONRecordValues(t, string(js), "requirement") {
		if s, ok := v.(string); ok {
			m[name] = s
		}
	}
	return m
}

// cnode is a document as encoding/xml sees it (package xmlcanon).
type cnode = xmlcanon.Node

func canonical(doc []byte) (*cnode, error) { return xmlcanon.Read(doc, translate.IsContainer) }

func diff(a, b *cnode, path string) string { return xmlcanon.Diff(a, b, path) }
