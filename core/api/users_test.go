package api_test

import (
	"net/http"
	"strings"
	"testing"
)

const alice = `<user>
<user_id>5</user_id>
<email>alice@acme.test</email>
<username>alice</username>
<firstname>Alice</firstname>
<lastname>Archer</lastname>
<deleted></deleted>
<status>Active</status>
</user>
`

const bob = `<user>
<user_id>6</user_id>
<email>bob@acme.test</email>
<username>bob</username>
<firstname>Bob</firstname>
<lastname>Baker</lastname>
<deleted></deleted>
<status>Active</status>
</user>
`

const carol = `<user>
<user_id>7</user_id>
<email>alice@acme.test</email>
<username>carol</username>
<firstname>Carol</firstname>
<lastname>Cooper</lastname>
<deleted></deleted>
<status>Active</status>
</user>
`

func TestUsers(t *testing.T) {
	e := start(t, fixedClock())
	const head = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	tests := []struct {
		path   string
		status int
		want   string
	}{
		{"/user", 200, head + "<users>\n" + alice + bob + carol + "</users>\n"},
		{"/user/6", 200, head + bob},
		{"/user/bob@acme.test", 200, head + "<users>\n" + bob + "</users>\n"},
		{"/user/alice@acme.test", 200, head + "<users>\n" + alice + carol + "</users>\n"},
		{"/user/ALICE@acme.test", 200, head + "<users>\n" + alice + carol + "</users>\n"},
		{"/user/alice%40acme.test", 200, head + "<users>\n" + alice + carol + "</users>\n"},
		{"/user/999", 404, ""},
		{"/user/nobody@acme.test", 404, ""},
	}
	for _, version := range []string{"/api", "/api2"} {
		for _, tt := range tests {
			t.Run(version+tt.path, func(t *testing.T) {
				e := e.on(t)
				res := e.must(req{Path: version + "/acme" + tt.path}, tt.status)
				if tt.status != 200 {
					errorMessage(t, res.Body)
					return
				}
				if res.Body != tt.want {
					t.Errorf("GET %s:\ngot:\n%s\nwant:\n%s", tt.path, res.Body, tt.want)
				}
			})
		}
	}
}

// The field list has the id field first and every element of docs/api.md, Field definitions.
func TestFieldList(t *testing.T) {
	e := start(t, fixedClock())
	res := e.must(req{Path: "/api/acme/re/field"}, http.StatusOK)
	wants := []string{
		`<?xml version="1.0" encoding="UTF-8"?>` + "\n<requirement_fields>\n<fields>\n<field>\n<name>id</name>\n<label>ID</label>\n" +
			"<type>Number-Integer</type>\n<sort>0</sort>\n<help />\n<required>0</required>\n<default_value />\n" +
			"<max_size>15</max_size>\n<special_purpose>id</special_purpose>\n</field>\n",
		"<field>\n<id>101</id>\n<name>field_101</name>\n<label>Title</label>\n<type>Textbox</type>\n<sort>1</sort>\n" +
			"<help>Short name</help>\n<required>1</required>\n<default_value />\n<max_size>255</max_size>\n" +
			"<special_purpose>title</special_purpose>\n</field>\n",
		"<max_size>30000</max_size>",
		"<field>\n<id>103</id>\n<name>field_103</name>\n<label>Status</label>\n<type>Picklist-Pick One</type>\n<sort>3</sort>\n" +
			"<help />\n<required>0</required>\n<default_value />\n<max_size />\n<special_purpose>status</special_purpose>\n" +
			"<list_type>normal</list_type>\n<picklist_options>\n" +
			"<option>\n<value>1</value>\n<label>Pending Review</label>\n<desc />\n<option_sort>1</option_sort>\n<option_default>1</option_default>\n</option>\n" +
			"<option>\n<value>2</value>\n<label>Accepted - Scheduled</label>\n<desc />\n<option_sort>2</option_sort>\n<option_default>0</option_default>\n</option>\n",
		"<name>field_104</name>",
		"<list_type>user</list_type>\n<picklist_options>\n<option>\n<value />\n<label>{{USERS}}</label>\n<desc />\n" +
			"<option_sort>0</option_sort>\n<option_default>0</option_default>\n</option>\n</picklist_options>\n",
		"<type>Picklist-Pick Multiple</type>",
		"</fields>\n</requirement_fields>\n",
	}
	rest := res.Body
	for _, want := range wants {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("field list lacks (in order) %q:\n%s", want, res.Body)
		}
		rest = rest[i+len(want):]
	}
	if got, want := strings.Count(res.Body, "<label>{{USERS}}</label>"), 2; got != want {
		t.Errorf("%d {{USERS}} options, want %d (one per user picklist)", got, want)
	}
	for _, tt := range []struct{ path, root string }{
		{"/api2/acme/ft/field", "<feature_fields>"},
		{"/api/acme/uc/field", "<use_case_fields>"},
		{"/api2/acme/risk/field", "<custom_object_fields>"},
	} {
		if got := e.must(req{Path: tt.path}, http.StatusOK).Body; !strings.Contains(got, tt.root) {
			t.Errorf("%s lacks %s:\n%s", tt.path, tt.root, got)
		}
	}
}

// Custom-object records: the five operations under version 2, 404 under version 1, and the short record
// read (no created_by, last_updated_by, version_comment).
func TestCustomObjectRecords(t *testing.T) {
	e := start(t, fixedClock())
	res := e.must(req{Method: "POST", Path: "/api2/acme/risk", Body: body("custom_object", "field_401", "Late", "field_402", "2")},
		http.StatusCreated)
	if got, want := res.Header.Get("Location"), e.URL+"/api2/acme/risk/1"; got != want {
		t.Fatalf("Location %q, want %q", got, want)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<custom_object>
<fields>
<field>
<name>id</name>
<label>ID</label>
<value>1</value>
<prefix>CO-</prefix>
<sort>0</sort>
</field>
<field>
<name>field_401</name>
<label>Title</label>
<value>Late</value>
<sort>1</sort>
</field>
<field>
<name>field_402</name>
<label>Severity</label>
<value id="2">High</value>
<list_type>normal</list_type>
<sort>2</sort>
</field>
<field>
<name>version_number</name>
<label>Version Number (Auto-generated)</label>
<value>1</value>
<sort />
</field>
<field>
<name>created_time</name>
<label>Created Time (GMT Timestamp)</label>
<value>1700000000</value>
<sort />
</field>
<field>
<name>last_updated_time</name>
<label>Last Updated Time (GMT Timestamp)</label>
<value>1700000000</value>
<sort />
</field>
</fields>
</custom_object>
`
	if got := e.must(req{Path: "/api2/acme/risk/1"}, http.StatusOK).Body; got != want {
		t.Errorf("custom record read:\ngot:\n%s\nwant:\n%s", got, want)
	}
	e.must(req{Method: "POST", Path: "/api2/acme/risk", Body: body("requirement", "field_401", "x")}, http.StatusBadRequest)
	e.must(req{Method: "PUT", Path: "/api2/acme/risk/1", Body: body("custom_object", "field_402", "1")}, http.StatusOK)
	if got := e.must(req{Path: "/api2/acme/risk/1"}, http.StatusOK).Body; !strings.Contains(got, `<value id="1">Low</value>`) {
		t.Errorf("update not visible:\n%s", got)
	}
	for _, r := range []req{
		{Path: "/api/acme/risk/1"},
		{Path: "/api/acme/risk/field"},
		{Method: "POST", Path: "/api/acme/risk", Body: body("custom_object", "field_401", "x")},
		{Method: "PUT", Path: "/api/acme/risk/1", Body: body("custom_object", "field_401", "x")},
		{Method: "DELETE", Path: "/api/acme/risk/1"},
	} {
		e.must(r, http.StatusNotFound)
	}
	e.must(req{Method: "DELETE", Path: "/api2/acme/risk/1"}, http.StatusOK)
	e.must(req{Path: "/api2/acme/risk/1"}, http.StatusNotFound)
	e.must(req{Method: "DELETE", Path: "/api2/acme/risk/1"}, http.StatusConflict)
}
