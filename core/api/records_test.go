package api_test

import (
	"encoding/xml"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// The full record read of a requirement with every field type set, in version 2 (CDATA, value_plaintext)
// and version 1 (plain text).
func TestRecordRead(t *testing.T) {
	e := start(t, fixedClock())
	id := e.create("/api2", "re", body("requirement",
		"field_101", "Export &amp; import",
		"field_102", "<![CDATA[<b>Important:</b> save as <i>CSV</i>. ]]]]><![CDATA[>]]>",
		"field_103", "2",
		"field_104", "6",
		"field_105", "3,1",
		"field_106", " 42 ",
		"field_107", "7,5",
		"version_comment", "first",
	))
	if got, want := id, "1"; got != want {
		t.Fatalf("new id %s, want %s", got, want)
	}
	wantFields := `<field>
<name>id</name>
<label>ID</label>
<value>1</value>
<prefix>RE-</prefix>
<sort>0</sort>
</field>
<field>
<name>field_101</name>
<label>Title</label>
<value>Export &amp; import</value>
<sort>1</sort>
</field>
<field>
<name>field_102</name>
<label>Description</label>
%DESC%<sort>2</sort>
</field>
<field>
<name>field_103</name>
<label>Status</label>
<value id="2">Accepted - Scheduled</value>
<list_type>normal</list_type>
<sort>3</sort>
</field>
<field>
<name>field_104</name>
<label>Owner</label>
<value id="6" email="bob@acme.test">Bob Baker</value>
<list_type>user</list_type>
<sort>4</sort>
</field>
<field>
<name>field_105</name>
<label>Platforms</label>
<value>
<value id="1">Web</value>
<value id="3">Android</value>
</value>
<list_type>normal</list_type>
<sort>5</sort>
</field>
<field>
<name>field_106</name>
<label>Estimate</label>
<value>42</value>
<sort>6</sort>
</field>
<field>
<name>field_107</name>
<label>Reviewers</label>
<value>
<value id="5" email="alice@acme.test">Alice Archer</value>
<value id="7" email="alice@acme.test">Carol Cooper</value>
</value>
<list_type>user</list_type>
<sort>7</sort>
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
<field>
<name>created_by</name>
<label>Created By</label>
<value>5</value>
<sort />
</field>
<field>
<name>last_updated_by</name>
<label>Last Updated By</label>
<value>5</value>
<sort />
</field>
<field>
<name>version_comment</name>
<label>Version Comment</label>
<value>first</value>
<sort />
</field>
`
	tests := []struct {
		version, desc string
	}{
		{"/api2", "<value><![CDATA[<b>Important:</b> save as <i>CSV</i>. ]]]]><![CDATA[>]]></value>\n" +
			"<value_plaintext>Important: save as CSV. ]]&gt;</value_plaintext>\n"},
		{"/api", "<value>Important: save as CSV. ]]&gt;</value>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			e := e.on(t)
			res := e.must(req{Path: tt.version + "/acme/re/1"}, http.StatusOK)
			want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n<requirement>\n<fields>\n" +
				strings.Replace(wantFields, "%DESC%", tt.desc, 1) + "</fields>\n</requirement>\n"
			if res.Body != want {
				t.Errorf("GET %s/acme/re/1:\ngot:\n%s\nwant:\n%s", tt.version, res.Body, want)
			}
			if got, want := res.Header.Get("Content-Type"), "application/xml; charset=utf-8"; got != want {
				t.Errorf("Content-Type %q, want %q", got, want)
			}
			var doc struct{}
			if err := xml.Unmarshal([]byte(res.Body), &doc); err != nil {
				t.Errorf("record read does not parse: %v", err)
			}
		})
	}
}

// Create, read, update, delete of re, ft and uc in both versions, with the Location header and the
// soft-delete statuses.
func TestRecordLifecycle(t *testing.T) {
	e := start(t, fixedClock())
	kinds := []struct{ seg, root, title, prefix string }{
		{"re", "requirement", "field_101", "RE-"},
		{"ft", "feature", "field_201", "FT-"},
		{"uc", "use_case", "field_301", "UC-"},
	}
	for _, version := range []string{"/api", "/api2"} {
		for _, k := range kinds {
			t.Run(version+"/"+k.seg, func(t *testing.T) {
				e := e.on(t)
				path := version + "/acme/" + k.seg
				res := e.must(req{Method: "POST", Path: path, Body: body(k.root, k.title, "One")}, http.StatusCreated)
				loc := res.Header.Get("Location")
				base := e.URL + path + "/"
				if !strings.HasPrefix(loc, base) {
					t.Fatalf("Location %q, want %s<id>", loc, base)
				}
				if res.Body != "" {
					t.Errorf("create body %q, want empty", res.Body)
				}
				rec := path + "/" + strings.TrimPrefix(loc, base)
				got := e.must(req{Path: rec}, http.StatusOK)
				for _, want := range []string{"<prefix>" + k.prefix + "</prefix>", "<value>One</value>", "<root>"} {
					want = strings.Replace(want, "<root>", "<"+k.root+">", 1)
					if !strings.Contains(got.Body, want) {
						t.Errorf("GET %s lacks %s:\n%s", rec, want, got.Body)
					}
				}

				e.must(req{Method: "PUT", Path: rec, Body: body(k.root, k.title, "Two", "version_comment", "renamed"),
					User: "bob", Pass: "bob-secret"}, http.StatusOK)
				got = e.must(req{Path: rec}, http.StatusOK)
				for _, want := range []string{
					"<value>Two</value>",
					"<name>version_number</name>\n<label>Version Number (Auto-generated)</label>\n<value>2</value>",
					"<name>created_by</name>\n<label>Created By</label>\n<value>5</value>",
					"<name>last_updated_by</name>\n<label>Last Updated By</label>\n<value>6</value>",
					"<value>renamed</value>",
				} {
					if !strings.Contains(got.Body, want) {
						t.Errorf("GET %s after PUT lacks %q:\n%s", rec, want, got.Body)
					}
				}

				e.must(req{Method: "DELETE", Path: rec}, http.StatusOK)
				e.must(req{Path: rec}, http.StatusNotFound)
				e.must(req{Method: "DELETE", Path: rec}, http.StatusConflict)
				e.must(req{Method: "PUT", Path: rec, Body: body(k.root, k.title, "Three")}, http.StatusNotFound)
			})
		}
	}
}

// A partial update changes only the fields sent, and every change is recorded for field history.
func TestUpdateRecordsHistory(t *testing.T) {
	e := start(t, fixedClock())
	id := e.create("/api", "re", body("requirement", "field_101", "A", "field_106", "1"))
	e.must(req{Method: "PUT", Path: "/api/acme/re/" + id, Body: body("requirement", "field_106", "2")}, http.StatusOK)
	e.must(req{Method: "PUT", Path: "/api/acme/re/" + id, Body: body("requirement", "field_106", "2")}, http.StatusOK)
	got := e.must(req{Path: "/api/acme/re/" + id}, http.StatusOK).Body
	for _, want := range []string{"<value>A</value>", "<value>2</value>"} {
		if !strings.Contains(got, want) {
			t.Errorf("record lacks %q:\n%s", want, got)
		}
	}
	changes, err := e.Store.History(t.Context(), acmeID(t, e), "re", 1, 106)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(changes), 1; got != want {
		t.Fatalf("%d changes of field_106, want %d: %+v", got, want, changes)
	}
	if got, want := changes[0].Old+"->"+changes[0].New, "1->2"; got != want {
		t.Errorf("change %s, want %s", got, want)
	}
}

// An update makes a version only when it changes something: a PUT of the stored values makes none (no new
// version_number, last update or history), and a version comment belongs to the version that carried it.
func TestUpdateVersions(t *testing.T) {
	c := testsupport.NewClock(time.Unix(1700000000, 0))
	e := start(t, api.Options{Now: c.Now})
	id := e.create("/api2", "re", body("requirement", "field_101", "A", "version_comment", "first"))
	path := "/api2/acme/re/" + id
	steps := []struct {
		name                string
		body                string
		version, updated    string // version_number and last_updated_time read back
		comment, historyLen string
	}{
		{"same value", body("requirement", "field_101", "A"), "1", "1700000000", "first", "0"},
		{"same value and comment", body("requirement", "field_101", "A", "version_comment", "first"), "1", "1700000000", "first", "0"},
		{"same value, empty comment", body("requirement", "field_101", "A", "version_comment", ""), "1", "1700000000", "first", "0"},
		{"change without a comment", body("requirement", "field_101", "B"), "2", "1700000040", "", "1"},
		{"change with a comment", body("requirement", "field_101", "C", "version_comment", "why"), "3", "1700000050", "why", "2"},
		{"same again", body("requirement", "field_101", "C", "field_106", ""), "3", "1700000050", "why", "2"},
		{"a new comment alone", body("requirement", "version_comment", "reviewed"), "4", "1700000070", "reviewed", "2"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			e := e.on(t)
			c.Add(10 * time.Second)
			e.must(req{Method: "PUT", Path: path, Body: st.body}, http.StatusOK)
			got := testsupport.RecordValues(t, e.must(req{Path: path}, http.StatusOK).Body)
			if got["version_number"] != st.version || got["last_updated_time"] != st.updated || got["version_comment"] != st.comment {
				t.Errorf("version_number %s, last_updated_time %s, version_comment %q; want %s, %s, %q",
					got["version_number"], got["last_updated_time"], got["version_comment"], st.version, st.updated, st.comment)
			}
			h := e.must(req{Path: path + "/fieldhistory/101"}, http.StatusOK).Body
			if n := strconv.Itoa(strings.Count(h, "<history>")); n != st.historyLen {
				t.Errorf("%s history entries of field_101, want %s:\n%s", n, st.historyLen, h)
			}
		})
	}
}

// A record read, in either version, may be sent back as the body of a PUT: unchanged it is accepted and
// changes nothing; with one value edited only that value changes; the system fields it carries are refused
// only when they differ from the stored ones.
func TestReadModifyWrite(t *testing.T) {
	e := start(t, fixedClock())
	reID := e.create("/api2", "re", body("requirement",
		"field_101", "Export &amp; import",
		"field_102", "<![CDATA[<p>Rich <b>text</b></p>]]>",
		"field_103", "2",
		"field_104", "6",
		"field_105", "3,1",
		"field_106", "42",
		"field_107", "7,5",
		"version_comment", "first",
	))
	riskID := e.create("/api2", "risk", body("custom_object", "field_401", "Late", "field_402", "2"))
	tests := []struct {
		version, seg, id, title string
	}{
		{"/api", "re", reID, "field_101"},
		{"/api2", "re", reID, "field_101"},
		{"/api2", "risk", riskID, "field_401"},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.seg, func(t *testing.T) {
			e := e.on(t)
			path := tt.version + "/acme/" + tt.seg + "/" + tt.id
			read := e.must(req{Path: path}, http.StatusOK).Body
			before := testsupport.RecordValues(t, read)

			e.must(req{Method: "PUT", Path: path, Body: read}, http.StatusOK)
			if got := e.must(req{Path: path}, http.StatusOK).Body; got != read {
				t.Errorf("a record read sent back changed the record:\nbefore:\n%s\nafter:\n%s", read, got)
			}

			edit := "Edited in " + tt.version[1:] // each subtest edits the record to a new title
			e.must(req{Method: "PUT", Path: path, Body: setValue(t, read, tt.title, edit)}, http.StatusOK)
			after := testsupport.RecordValues(t, e.must(req{Path: path}, http.StatusOK).Body)
			wantVersion, _ := strconv.Atoi(before["version_number"])
			if after[tt.title] != edit || after["version_number"] != strconv.Itoa(wantVersion+1) {
				t.Errorf("after editing the title: title %q, version %s; want %q, %d", after[tt.title],
					after["version_number"], edit, wantVersion+1)
			}
			for name, v := range before {
				if name != tt.title && name != "version_number" && name != "last_updated_time" && name != "last_updated_by" &&
					name != "version_comment" && after[name] != v {
					t.Errorf("%s changed from %q to %q", name, v, after[name])
				}
			}

			// System fields that differ from the stored values are refused, naming the field.
			read = e.must(req{Path: path}, http.StatusOK).Body
			for _, name := range []string{"version_number", "created_time", "last_updated_time", "id"} {
				res := e.must(req{Method: "PUT", Path: path, Body: setValue(t, read, name, "99")}, http.StatusBadRequest)
				if msg := errorMessage(t, res.Body); !strings.Contains(msg, name+":") {
					t.Errorf("changed %s: message %q does not name it", name, msg)
				}
			}
		})
	}
	// On create the system fields are refused even with plausible values.
	res := e.must(req{Method: "POST", Path: "/api2/acme/re", Body: body("requirement", "field_101", "x", "created_by", "5")},
		http.StatusBadRequest)
	if msg := errorMessage(t, res.Body); !strings.Contains(msg, "created_by: is set by the system") {
		t.Errorf("message %q", msg)
	}
}

// A version-1 write of a Textarea is plain text, stored as its HTML: version 2 reads it escaped (no caller
// injects markup through version 1) and version 1 reads it back as written. A version-1 read sent back keeps
// the stored HTML.
func TestVersion1TextareaIsText(t *testing.T) {
	e := start(t, fixedClock())
	tests := []struct {
		name, sent string // sent: the XML text of <value>
		html, text string // read back by version 2 (CDATA) and version 1
	}{
		{"special characters", "a &lt; b &amp; c", "a &lt; b &amp; c", "a < b & c"},
		{"markup", "&lt;b&gt;bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;", "&lt;b&gt;bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;",
			"<b>bold</b> <script>x</script>"},
		{"markup in CDATA", "<![CDATA[<i>x</i>]]>", "&lt;i&gt;x&lt;/i&gt;", "<i>x</i>"},
		{"lines", "line 1\nline 2", "line 1<br />line 2", "line 1\nline 2"},
		{"entity text", "&amp;amp;", "&amp;amp;", "&amp;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.on(t)
			id := e.create("/api", "re", body("requirement", "field_101", "x", "field_102", tt.sent))
			v2 := e.must(req{Path: "/api2/acme/re/" + id}, http.StatusOK).Body
			if want := "<value><![CDATA[" + tt.html + "]]></value>"; !strings.Contains(v2, want) {
				t.Errorf("version 2 read lacks %s:\n%s", want, v2)
			}
			if got := testsupport.RecordValues(t, v2)["field_102"]; got != tt.html {
				t.Errorf("version 2 value %q, want %q", got, tt.html)
			}
			if got := testsupport.RecordValues(t, e.must(req{Path: "/api/acme/re/" + id}, http.StatusOK).Body)["field_102"]; got != tt.text {
				t.Errorf("version 1 value %q, want %q", got, tt.text)
			}
		})
	}

	// Version 2 writes HTML as sent; a version-1 read of it sent back keeps it; an edit in version 1 replaces
	// it with the HTML of the new text.
	id := e.create("/api2", "re", body("requirement", "field_101", "x", "field_102", "<![CDATA[<p>Hi <b>there</b></p>]]>"))
	v1 := e.must(req{Path: "/api/acme/re/" + id}, http.StatusOK).Body
	e.must(req{Method: "PUT", Path: "/api/acme/re/" + id, Body: v1}, http.StatusOK)
	v2 := testsupport.RecordValues(t, e.must(req{Path: "/api2/acme/re/" + id}, http.StatusOK).Body)
	if v2["field_102"] != "<p>Hi <b>there</b></p>" || v2["version_number"] != "1" {
		t.Errorf("after a version-1 read sent back: %q, version %s; want the HTML kept, version 1", v2["field_102"], v2["version_number"])
	}
	e.must(req{Method: "PUT", Path: "/api/acme/re/" + id, Body: setValue(t, v1, "field_102", "Hi &lt;there&gt;")}, http.StatusOK)
	if got := testsupport.RecordValues(t, e.must(req{Path: "/api2/acme/re/" + id}, http.StatusOK).Body)["field_102"]; got != "Hi &lt;there&gt;" {
		t.Errorf("after a version-1 edit: %q, want %q", got, "Hi &lt;there&gt;")
	}
}

// A version-1 Textarea's max_size counts the characters of the text the client sent, not of the HTML it is
// stored as: 30,000 ampersands fit a field of max_size 30000 (150,000 characters as HTML), one more does not.
func TestVersion1TextareaMaxSizeCountsText(t *testing.T) {
	e := start(t, fixedClock())
	full := strings.Repeat("&amp;", 30000)
	id := e.create("/api", "re", body("requirement", "field_101", "x", "field_102", full))
	if got := testsupport.RecordValues(t, e.must(req{Path: "/api/acme/re/" + id}, http.StatusOK).Body)["field_102"]; got != strings.Repeat("&", 30000) {
		t.Errorf("version 1 read back %d characters, want the 30000 ampersands written", len(got))
	}
	res := e.must(req{Method: "POST", Path: "/api/acme/re", Body: body("requirement", "field_101", "x", "field_102", full+"&amp;")},
		http.StatusBadRequest)
	if msg := errorMessage(t, res.Body); !strings.Contains(msg, "field_102: longer than max_size 30000") {
		t.Errorf("message %q", msg)
	}
}

// setValue replaces the text of the <value> of field name in a record read (a plain value, not CDATA).
func setValue(t *testing.T, doc, name, value string) string {
	t.Helper()
	i := strings.Index(doc, "<name>"+name+"</name>\n")
	if i < 0 {
		t.Fatalf("the read has no field %s", name)
	}
	start := i + strings.Index(doc[i:], "<value>") + len("<value>")
	end := start + strings.Index(doc[start:], "</value>")
	return doc[:start] + value + doc[end:]
}

// Create applies the default option of a picklist the body leaves out.
func TestCreateDefaults(t *testing.T) {
	e := start(t, fixedClock())
	id := e.create("/api", "re", body("requirement", "field_101", "A"))
	got := e.must(req{Path: "/api/acme/re/" + id}, http.StatusOK).Body
	if want := `<value id="1">Pending Review</value>`; !strings.Contains(got, want) {
		t.Errorf("record lacks the default status %s:\n%s", want, got)
	}
}

// A picklist value may be sent back in the shape a read gives it.
func TestWritePicklistReadShape(t *testing.T) {
	e := start(t, fixedClock())
	b := `<requirement><fields>
<field><name>field_101</name><label>Title</label><value>A</value><sort>1</sort></field>
<field><name>field_103</name><value id="3">Accepted - Unscheduled</value></field>
<field><name>field_105</name><value><value id="2">iOS</value><value id="1">Web</value></value></field>
</fields></requirement>`
	id := e.create("/api2", "re", b)
	got := e.must(req{Path: "/api2/acme/re/" + id}, http.StatusOK).Body
	for _, want := range []string{`<value id="3">Accepted - Unscheduled</value>`, "<value>\n<value id=\"1\">Web</value>\n<value id=\"2\">iOS</value>\n</value>"} {
		if !strings.Contains(got, want) {
			t.Errorf("record lacks %s:\n%s", want, got)
		}
	}
}

// Location names the address the caller used: the gateway's scheme and host when it forwards them, believed
// only from a trusted proxy (the tests' client is on loopback).
func TestLocation(t *testing.T) {
	opt := fixedClock()
	opt.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	trusting := start(t, opt)
	opt.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	elsewhere := start(t, opt)
	untrusting := start(t, fixedClock())
	forwarded := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "gw.example:8443"}
	tests := []struct {
		name, version string
		e             *env
		header        map[string]string
		want          string
	}{
		{"direct v1", "/api", trusting, nil, trusting.URL + "/api/acme/re/"},
		{"direct v2", "/api2", trusting, nil, trusting.URL + "/api2/acme/re/"},
		{"forwarded", "/api2", trusting, forwarded, "https://gw.example:8443/api2/acme/re/"},
		{"forwarded list", "/api", trusting, map[string]string{"X-Forwarded-Proto": "https, http", "X-Forwarded-Host": "a.example, b"},
			"https://a.example/api/acme/re/"},
		{"bad forwarded host", "/api", trusting, map[string]string{"X-Forwarded-Host": "evil/x"}, trusting.URL + "/api/acme/re/"},
		// The rule of package wire, which the gateway reads its proxies' X-Forwarded-Host by and checks the
		// caller's Host against: a host the gateway would refuse is no host here either.
		{"forwarded IPv6 literal", "/api2", trusting, map[string]string{"X-Forwarded-Host": "[2001:db8::1]:8443"},
			"http://[2001:db8::1]:8443/api2/acme/re/"},
		{"scheme in upper case", "/api2", trusting, map[string]string{"X-Forwarded-Proto": "HTTPS", "X-Forwarded-Host": "gw.example"},
			"https://gw.example/api2/acme/re/"},
		{"forwarded host with sub-delims", "/api", trusting, map[string]string{"X-Forwarded-Host": "gw.example;x=<y>"},
			trusting.URL + "/api/acme/re/"},
		{"forwarded host with a quote", "/api", trusting, map[string]string{"X-Forwarded-Host": `gw.example"`}, trusting.URL + "/api/acme/re/"},
		{"forwarded host with an impossible port", "/api", trusting, map[string]string{"X-Forwarded-Host": "gw.example:99999"},
			trusting.URL + "/api/acme/re/"},
		{"forwarded IPv6 address without brackets", "/api", trusting, map[string]string{"X-Forwarded-Host": "2001:db8::1"},
			trusting.URL + "/api/acme/re/"},
		{"forwarded by an untrusted peer", "/api2", untrusting, forwarded, untrusting.URL + "/api2/acme/re/"},
		{"forwarded from outside the trusted network", "/api2", elsewhere, forwarded, elsewhere.URL + "/api2/acme/re/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.e.on(t)
			res := e.must(req{Method: "POST", Path: tt.version + "/acme/re", Body: body("requirement", "field_101", "x"),
				Header: tt.header}, http.StatusCreated)
			if got := res.Header.Get("Location"); !strings.HasPrefix(got, tt.want) || len(got) == len(tt.want) {
				t.Errorf("Location %q, want %s<id>", got, tt.want)
			}
		})
	}
}

// Concurrent creates all succeed with distinct ids.
func TestConcurrentCreates(t *testing.T) {
	e := start(t, fixedClock())
	const n = 40
	ids := make(chan string, n)
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		go func() {
			r, err := e.send(req{Method: "POST", Path: "/api/acme/re", Body: body("requirement", "field_101", "x")})
			if err != nil {
				errs <- err.Error()
				ids <- ""
				return
			}
			if r.Status != http.StatusCreated {
				errs <- r.Body
				ids <- ""
				return
			}
			ids <- r.Header.Get("Location")
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		id := <-ids
		if id == "" {
			t.Errorf("create failed: %s", <-errs)
			continue
		}
		if seen[id] {
			t.Errorf("id %s given twice", id)
		}
		seen[id] = true
	}
}

// Carriage returns sent as &#xD; are stored as sent and read back, in both versions and in field history,
// as text that an XML reader decodes to the same string: a literal CR would reach it as a line feed. The
// record is written in version 2, which stores a Textarea's HTML as sent.
func TestCarriageReturnsReadBack(t *testing.T) {
	e := start(t, fixedClock())
	ref := strings.NewReplacer("\r", "&#xD;", "\n", "&#xA;", ">", "&gt;")
	values := map[string]string{
		"field_101":       "one\r\ntwo\rthree",
		"field_102":       "a]]>b\r\nline two\rend\r",
		"version_comment": "why\r\nand\r",
	}
	id := e.create("/api2", "re", body("requirement", "field_101", ref.Replace(values["field_101"]),
		"field_102", ref.Replace(values["field_102"]), "version_comment", ref.Replace(values["version_comment"])))

	acct, err := e.Store.Account(t.Context(), keyAcme)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := e.Store.Record(t.Context(), acct.ID, "re", n)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Values[101] != values["field_101"] || rec.Values[102] != values["field_102"] ||
		rec.VersionComment != values["version_comment"] {
		t.Errorf("stored %q, %q, comment %q; want %q, %q, %q", rec.Values[101], rec.Values[102],
			rec.VersionComment, values["field_101"], values["field_102"], values["version_comment"])
	}

	for _, version := range []string{"/api", "/api2"} {
		res := e.must(req{Path: version + "/acme/re/" + id}, http.StatusOK)
		got := testsupport.RecordValues(t, res.Body)
		for name, want := range values {
			if got[name] != want {
				t.Errorf("%s: %s read back %q, want %q\n%s", version, name, got[name], want, res.Body)
			}
		}
	}

	next := "x\r\ny\r"
	e.must(req{Method: "PUT", Path: "/api2/acme/re/" + id, Body: body("requirement", "field_102", ref.Replace(next))},
		http.StatusOK)
	res := e.must(req{Path: "/api2/acme/re/" + id + "/fieldhistory/102"}, http.StatusOK)
	var h struct {
		Items []struct {
			Old string `xml:"old_value"`
			New string `xml:"new_value"`
		} `xml:"history"`
	}
	if err := xml.Unmarshal([]byte(res.Body), &h); err != nil {
		t.Fatalf("history: %v\n%s", err, res.Body)
	}
	if len(h.Items) != 1 || h.Items[0].Old != values["field_102"] || h.Items[0].New != next {
		t.Errorf("history %+v, want one change from %q to %q\n%s", h.Items, values["field_102"], next, res.Body)
	}
}

// TestCustomRecordTakesNoVersionComment: a custom object's record has no version comment and no created_by or
// last_updated_by (its reads show none), so a write that sends one is refused like any unknown field, and a
// PUT of a comment alone never makes an invisible version.
func TestCustomRecordTakesNoVersionComment(t *testing.T) {
	e := start(t, api.Options{})
	id := e.create("/api2", "risk", body("custom_object", "field_401", "Flood"))
	path := "/api2/" + keyAcme + "/risk/" + id
	for _, tc := range []struct{ method, path, body, field string }{
		{"POST", "/api2/" + keyAcme + "/risk", body("custom_object", "field_401", "Fire", "version_comment", "why"), "version_comment"},
		{"PUT", path, body("custom_object", "version_comment", "only a comment"), "version_comment"},
		{"PUT", path, body("custom_object", "field_401", "Flood 2", "version_comment", "why"), "version_comment"},
		{"PUT", path, body("custom_object", "created_by", "5"), "created_by"},
		{"PUT", path, body("custom_object", "last_updated_by", "5"), "last_updated_by"},
	} {
		got := e.do(req{Method: tc.method, Path: tc.path, Body: tc.body})
		if want := "Invalid request: " + tc.field + ": unknown field"; got.Status != http.StatusBadRequest || !strings.Contains(got.Body, want) {
			t.Errorf("%s %s: %d %s, want 400 %q", tc.method, tc.body, got.Status, got.Body, want)
		}
	}
	read := e.must(req{Path: path}, http.StatusOK).Body
	if !strings.Contains(read, "<name>version_number</name>\n<label>Version Number (Auto-generated)</label>\n<value>1</value>") ||
		!strings.Contains(read, "<value>Flood</value>") {
		t.Errorf("a refused write changed the record:\n%s", read)
	}
	// The read sent back as it is stays acceptable.
	e.must(req{Method: "PUT", Path: path, Body: read}, http.StatusOK)
}

// TestObjectPathIsNoKind: /object is the object list, not a kind of record: under version 1, or with more path
// after it, the 404 says the resource does not exist rather than "The object object does not exist".
func TestObjectPathIsNoKind(t *testing.T) {
	e := start(t, api.Options{})
	for path, want := range map[string]string{
		"/api/" + keyAcme + "/object":     "this path needs version 2 (/api2/)",
		"/api2/" + keyAcme + "/object/1":  "The requested resource does not exist.",
		"/api2/" + keyAcme + "/object/re": "The requested resource does not exist.",
		"/api2/" + keyAcme + "/nope":      "The object nope does not exist.",
	} {
		got := e.do(req{Path: path})
		if got.Status != http.StatusNotFound || !strings.Contains(got.Body, want) {
			t.Errorf("GET %s: %d %s, want 404 %q", path, got.Status, got.Body, want)
		}
	}
}
