package docexample

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const page = "# Page\n\n" +
	"```sh\n" +
	"curl -u demo:demo -i -X DELETE http://127.0.0.1:8080/api2/demo/re/14   # 200\n" +
	"curl -u demo:demo -i -X PUT http://127.0.0.1:8080/api2/demo/re/14 \\\n" +
	"  -H 'Content-Type: application/xml' --data '<requirement/>'\n" +
	"```\n\n" +
	"```http\n" +
	"HTTP/1.1 404 Not Found\n" +
	"Content-Type: application/xml; charset=utf-8\n\n" +
	"<error>\n<message>The record RE-14 does not exist.</message>\n</error>\n" +
	"```\n\n" +
	"```xml\n<requirement/>\n```\n\n" +
	"<!-- example server: throttle -->\n" +
	"```sh\n" +
	"for i in $(seq 24); do curl -s -o /dev/null -u demo:demo http://127.0.0.1:8080/api2/demo/re/1; done\n" +
	"curl -s -u demo:demo http://127.0.0.1:8080/api2/demo/re/1 > re1.xml   # keep it\n" +
	"```\n"

// TestParse checks that the page's convention is read as docs/api.md states it, and that what it cannot run is
// refused rather than skipped.
func TestParse(t *testing.T) {
	ex, err := Parse([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 2 {
		t.Fatalf("%d examples, want 2", len(ex))
	}
	first, second := ex[0], ex[1]
	if first.Server != "" || len(first.Commands) != 2 || first.Commands[0].Status != 200 || first.Commands[1].Status != 0 {
		t.Errorf("first example: %+v", first)
	}
	if got := strings.Join(first.Commands[1].Args, "|"); got != "-u|demo:demo|-i|-X|PUT|http://127.0.0.1:8080/api2/demo/re/14|-H|Content-Type: application/xml|--data|<requirement/>" {
		t.Errorf("continued command: %s", got)
	}
	if e := first.Expect; e == nil || e.Status != 404 || e.Header.Get("Content-Type") != "application/xml; charset=utf-8" ||
		!strings.HasPrefix(e.Body, "<error>") {
		t.Errorf("expected answer: %+v", first.Expect)
	}
	if second.Server != "throttle" || second.Expect != nil || second.Commands[0].Repeat != 24 ||
		second.Commands[1].Output != "re1.xml" || second.Commands[1].Status != 0 {
		t.Errorf("second example: %+v", second)
	}

	for _, tc := range []struct {
		name, page, want string
	}{
		{"an answer not tagged http", "```sh\ncurl http://x/\n```\n\n```xml\n<a/>\n```\n", "must be a block tagged http"},
		{"a response outside an http block", "```\nHTTP/1.1 200 OK\n```\n", "tagged http"},
		{"an http block without a command", "Text.\n\n```http\nHTTP/1.1 200 OK\n```\n", "must follow a sh block"},
		{"an http block after prose", "```sh\ncurl http://x/\n```\nText.\n```http\nHTTP/1.1 200 OK\n```\n", "must follow a sh block"},
		{"a pipe", "```sh\ncurl http://x/ | grep -i etag\n```\n", "not supported"},
		{"a variable", "```sh\ncurl \"$B/re/1\"\n```\n", "not supported"},
		{"another program", "```sh\nwget http://x/\n```\n", "not a curl command"},
		{"no status line", "```sh\ncurl http://x/\n```\n\n```http\n<a/>\n```\n", "status line"},
		{"an open block", "```sh\ncurl http://x/\n", "not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.page))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRunSendsWhatCurlSends checks the requests the runner makes from curl options, over loopback to a
// server that records them.
func TestRunSendsWhatCurlSends(t *testing.T) {
	type seen struct {
		method, path string
		header       http.Header
		body         string
	}
	var last seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last = seen{r.Method, r.URL.Path, r.Header.Clone(), string(b)}
		w.Header().Set("Location", "http://"+r.Host+"/api2/demo/re/21")
		_, _ = w.Write([]byte("<a>\n<b/>\n</a>\n"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.xml"), []byte("<a>\n<b/>\n</a>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Session{Client: NewClient(), Addr: strings.TrimPrefix(srv.URL, "http://"), Dir: dir}
	url := "http://" + DocAddress + "/api2/demo/re/1"
	for _, tc := range []struct {
		name, cmd    string
		method, body string
		header       map[string]string // "" value: absent
	}{
		{"GET with credentials", "curl -u demo:demo " + url, "GET", "",
			map[string]string{"Authorization": "Basic ZGVtbzpkZW1v", "Accept": "*/*", "Accept-Encoding": ""}},
		{"-I is HEAD", "curl -I " + url, "HEAD", "", nil},
		{"-d is a form POST", "curl -d 'a=1' " + url, "POST", "a=1",
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"-X and -H", "curl -X PUT -H 'Content-Type: application/xml' -H 'If-Match: \"t\"' --data '<a/>' " + url, "PUT", "<a/>",
			map[string]string{"Content-Type": "application/xml", "If-Match": `"t"`}},
		{"an empty -H removes the header", "curl -H 'Content-Type:' --data-binary '<a/>' " + url, "POST", "<a/>",
			map[string]string{"Content-Type": ""}},
		{"--data-binary @file keeps line breaks", "curl --data-binary @body.xml " + url, "POST", "<a>\n<b/>\n</a>\n", nil},
		{"-d @file drops them", "curl -d @body.xml " + url, "POST", "<a><b/></a>", nil},
		{"a header of the caller's own", "curl -H 'Accept: application/json' " + url, "GET", "",
			map[string]string{"Accept": "application/json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := Parse([]byte("```sh\n" + tc.cmd + "\n```\n"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(t.Context(), ex[0].Commands[0]); err != nil {
				t.Fatal(err)
			}
			if last.method != tc.method || last.body != tc.body {
				t.Errorf("sent %s %q, want %s %q", last.method, last.body, tc.method, tc.body)
			}
			for k, v := range tc.header {
				if got := last.header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}

	// An unknown option is refused, not ignored.
	ex, _ := Parse([]byte("```sh\ncurl --compressed " + url + "\n```\n"))
	if _, err := s.Run(t.Context(), ex[0].Commands[0]); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("--compressed: %v, want refused", err)
	}

	// A Location the page shows is replaced, in later commands, by the one the server gave.
	ex, _ = Parse([]byte("```sh\ncurl -X POST " + url + "\n```\n\n```http\nHTTP/1.1 200 OK\nLocation: http://" + DocAddress +
		"/api2/demo/re/14\n```\n\n```sh\ncurl -X PUT http://" + DocAddress + "/api2/demo/re/14\n```\n"))
	res, err := s.Run(t.Context(), ex[0].Commands[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Check(ex[0].Expect, res); d != nil {
		t.Fatal(d)
	}
	if _, err := s.Run(t.Context(), ex[1].Commands[0]); err != nil {
		t.Fatal(err)
	}
	if last.path != "/api2/demo/re/21" {
		t.Errorf("the later command went to %s, want the created /api2/demo/re/21", last.path)
	}
}

// TestCheckFailsWhenThePageChanges checks that an answer that matches a page stops matching when the page's
// status or shape changes, and keeps matching when only values that differ between stores change.
func TestCheckFailsWhenThePageChanges(t *testing.T) {
	xmlBody := `<?xml version="1.0" encoding="UTF-8"?>
<requirement>
<fields>
<field>
<name>id</name>
<value>14</value>
<prefix>RE-</prefix>
</field>
<field>
<name>field_103</name>
<value id="2">Accepted</value>
</field>
</fields>
</requirement>`
	xmlGot := &Result{Status: 200, Body: []byte(xmlBody), Header: http.Header{
		"Content-Type": {"application/xml; charset=utf-8"}, "Etag": {`"923f55d5c8e7126451cf533d"`}, "Allow": {"GET, PUT, DELETE"},
	}}
	xmlPage := "HTTP/1.1 200 OK\nContent-Type: application/xml; charset=utf-8\nETag: \"3f9c1e0a6b7d2c4e8f015a9b\"\n\n" + xmlBody
	jsonBody := `{"requirement":{"fields":{"field":[{"name":"id","value":"14","sort":0},{"name":"field_104","value":null,"sort":4}]}}}`
	jsonGot := &Result{Status: 400, Body: []byte(jsonBody), Header: http.Header{}}
	jsonPage := "HTTP/1.1 400 Bad Request\n\n" + jsonBody
	errGot := &Result{Status: 409, Header: http.Header{},
		Body: []byte("<error>\n<code>Request_Throttled</code>\n<message>The record RE-14 is already deleted.</message>\n</error>")}
	errPage := "HTTP/1.1 409 Conflict\n\n<error>\n<code>Request_Throttled</code>\n<message>The record RE-14 is already deleted.</message>\n</error>"

	for _, tc := range []struct {
		name       string
		got        *Result
		page       string
		old, new   string // the change made to page
		wantDiffer bool
	}{
		{"XML as shown", xmlGot, xmlPage, "", "", false},
		{"another status", xmlGot, xmlPage, "200 OK", "201 Created", true},
		{"another header value", xmlGot, xmlPage, "charset=utf-8", "charset=latin1", true},
		{"another tag", xmlGot, xmlPage, "3f9c1e0a6b7d2c4e8f015a9b", "00aa", false},
		{"a header the answer lacks", xmlGot, xmlPage, "ETag:", "Idempotent-Replayed: true\nETag:", true},
		{"another value", xmlGot, xmlPage, "<value>14</value>", "<value>15</value>", false},
		{"a renamed element", xmlGot, xmlPage, "<prefix>RE-</prefix>", "<id_prefix>RE-</id_prefix>", true},
		{"an element the answer lacks", xmlGot, xmlPage, "<prefix>RE-</prefix>", "<prefix>RE-</prefix>\n<sort>0</sort>", true},
		{"an element left out", xmlGot, xmlPage, "<prefix>RE-</prefix>\n", "", true},
		{"an element left out with ...", xmlGot, xmlPage, "<prefix>RE-</prefix>\n", "...\n", false},
		{"another field name", xmlGot, xmlPage, "<name>field_103</name>", "<name>field_104</name>", true},
		{"a renamed attribute", xmlGot, xmlPage, `<value id="2">`, `<value key="2">`, true},
		{"no XML declaration", &Result{Status: 200, Header: xmlGot.Header, Body: []byte(strings.SplitN(xmlBody, "\n", 2)[1])},
			xmlPage, "", "", true},

		{"JSON as shown", jsonGot, jsonPage, "", "", false},
		{"a renamed key", jsonGot, jsonPage, `"sort":4`, `"order":4`, true},
		{"another JSON type", jsonGot, jsonPage, `"value":null`, `"value":""`, true},
		{"a key the answer lacks", jsonGot, jsonPage, `"sort":4`, `"sort":4,"list_type":"user"`, true},
		{"a key left out", jsonGot, jsonPage, `,"sort":4`, ``, true},
		{"a key left out with ...", jsonGot, jsonPage, `,"sort":4`, `,...`, false},
		{"an item left out", jsonGot, jsonPage, `{"name":"id","value":"14","sort":0},`, ``, true},
		{"an item left out with ...", jsonGot, jsonPage, `{"name":"id","value":"14","sort":0},`, `...,`, false},

		{"an error as shown", errGot, errPage, "", "", false},
		{"another message", errGot, errPage, "already deleted", "deleted", true},
		{"the message of another record", errGot, errPage, "RE-14", "RE-16", false},
		{"another code", errGot, errPage, "Request_Throttled", "Throttled", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := "```sh\ncurl http://x/\n```\n\n```http\n" + strings.Replace(tc.page, tc.old, tc.new, 1) + "\n```\n"
			ex, err := Parse([]byte(md))
			if err != nil {
				t.Fatal(err)
			}
			diffs := Check(ex[0].Expect, tc.got, DocAddress)
			if (len(diffs) > 0) != tc.wantDiffer {
				t.Errorf("differences %q; want some: %v", diffs, tc.wantDiffer)
			}
		})
	}
}

// TestCheckSaysWhere checks that a difference inside an elided list is reported at the item that differs, so
// that a failing example says what to fix.
func TestCheckSaysWhere(t *testing.T) {
	got := &Result{Status: 200, Header: http.Header{}, Body: []byte(`{"f":[{"name":"a","x":1},{"name":"b","list_type":"user"},{"name":"c"}]}`)}
	for _, tc := range []struct{ page, want string }{
		{`{"f":[...,{"name":"b","listtype":"user"},...]}`, `/f/1: keys [name list_type]`},
		{"<r>\n...\n<f><name>b</name><kind/></f>\n...\n</r>", `/r/f[2]: children [name(b)], the page shows [name(b) kind]`},
	} {
		body := got.Body
		if strings.HasPrefix(tc.page, "<") {
			body = []byte("<r><f><name>a</name></f><f><name>b</name></f><f><name>c</name></f></r>")
		}
		ex, err := Parse([]byte("```sh\ncurl http://x/\n```\n\n```http\nHTTP/1.1 200 OK\n\n" + tc.page + "\n```\n"))
		if err != nil {
			t.Fatal(err)
		}
		diffs := Check(ex[0].Expect, &Result{Status: 200, Header: got.Header, Body: body}, DocAddress)
		if len(diffs) != 1 || !strings.HasPrefix(diffs[0], tc.want) {
			t.Errorf("page %s: differences %q, want one starting %q", tc.page, diffs, tc.want)
		}
	}
}
