package api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// fixedClock is Options with the clock at 1700000000.
func fixedClock() api.Options {
	c := testsupport.NewClock(time.Unix(1700000000, 0))
	return api.Options{Now: c.Now}
}

// acmeID is the internal id of the test account.
func acmeID(t *testing.T, e *env) int64 {
	t.Helper()
	a, err := e.Store.Account(context.Background(), keyAcme)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// errorMessage checks that body is the <error><message> document and returns the message.
func errorMessage(t *testing.T, body string) string {
	t.Helper()
	const head = `<?xml version="1.0" encoding="UTF-8"?>` + "\n<error>\n<message>"
	const tail = "</message>\n</error>\n"
	if !strings.HasPrefix(body, head) || !strings.HasSuffix(body, tail) {
		t.Fatalf("not an <error><message> body:\n%s", body)
	}
	return strings.TrimSuffix(strings.TrimPrefix(body, head), tail)
}

// Every write that fails validation gets 400 with a message naming the field; XML that is not well formed
// gets 415.
func TestWriteErrors(t *testing.T) {
	e := start(t, fixedClock())
	id := e.create("/api", "re", body("requirement", "field_101", "x"))
	long := strings.Repeat("a", 256)
	tests := []struct {
		name, method, body string
		status             int
		mention            string // the message must contain this
	}{
		{"malformed", "POST", "<requirement><fields>", 415, "not well formed"},
		{"mismatched tags", "POST", "<requirement></fields>", 415, "not well formed"},
		{"not xml", "POST", "field_101=x", 415, "not well formed"},
		{"empty", "POST", "", 415, "not well formed"},
		{"undefined entity", "POST", body("requirement", "field_101", "&bogus;"), 415, "not well formed"},
		{"two roots", "POST", body("requirement", "field_101", "x") + "<requirement/>", 415, "not well formed"},
		{"wrong root", "POST", body("feature", "field_101", "x"), 400, "&lt;requirement&gt;"},
		{"dtd", "POST", `<!DOCTYPE requirement [<!ENTITY x "y">]>` + body("requirement", "field_101", "x"), 400, "document type"},
		{"unknown element", "POST", "<requirement><fieldz/></requirement>", 400, "fieldz"},
		{"text in fields", "POST", "<requirement><fields>oops</fields></requirement>", 400, "text"},
		{"unknown field", "POST", body("requirement", "field_101", "x", "field_999", "1"), 400, "field_999"},
		{"unknown name", "POST", body("requirement", "field_101", "x", "title", "1"), 400, "title"},
		{"field of another kind", "POST", body("requirement", "field_101", "x", "field_201", "1"), 400, "field_201"},
		{"id on create", "POST", body("requirement", "id", "5", "field_101", "x"), 400, "id"},
		{"required missing", "POST", body("requirement", "field_106", "1"), 400, "field_101"},
		{"required empty", "POST", body("requirement", "field_101", "  "), 400, "field_101"},
		{"not an option", "POST", body("requirement", "field_101", "x", "field_103", "9"), 400, "field_103"},
		{"option not integer", "POST", body("requirement", "field_101", "x", "field_103", "high"), 400, "field_103"},
		{"multi not an option", "POST", body("requirement", "field_101", "x", "field_105", "1,9"), 400, "field_105"},
		{"not a user", "POST", body("requirement", "field_101", "x", "field_104", "99"), 400, "field_104"},
		{"user of another account", "POST", body("requirement", "field_101", "x", "field_104", "1"), 400, "field_104"},
		{"not an integer", "POST", body("requirement", "field_101", "x", "field_106", "4.5"), 400, "field_106"},
		{"too long", "POST", body("requirement", "field_101", long), 400, "field_101"},
		{"read-only field", "POST", body("requirement", "field_101", "x", "version_number", "3"), 400, "version_number"},
		{"twice", "POST", body("requirement", "field_101", "x", "field_101", "y"), 400, "field_101"},
		{"two values", "POST", twoValues("field_101", "<value>x</value><value>y</value>"), 400, "field_101: sent with more than one"},
		{"two picklist values", "POST", twoValues("field_105", `<value id="1">Web</value><value id="2">iOS</value>`), 400, "field_105: sent with more than one"},
		{"update two values", "PUT", twoValues("field_101", "<value>x</value><value/>"), 400, "field_101: sent with more than one"},
		{"no name", "POST", "<requirement><fields><field><value>x</value></field></fields></requirement>", 400, "name"},
		{"update other id", "PUT", body("requirement", "id", "99", "field_101", "x"), 400, "id"},
		{"update clears required", "PUT", body("requirement", "field_101", ""), 400, "field_101"},
		{"update nothing", "PUT", "<requirement><fields/></requirement>", 400, "no field"},
		{"update unknown field", "PUT", body("requirement", "field_999", "1"), 400, "field_999"},
		{"update malformed", "PUT", "<requirement>", 415, "not well formed"},
	}
	for _, version := range []string{"/api", "/api2"} {
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				e := e.on(t)
				path := version + "/acme/re"
				if tt.method == "PUT" {
					path += "/" + id
				}
				res := e.must(req{Method: tt.method, Path: path, Body: tt.body}, tt.status)
				if msg := errorMessage(t, res.Body); !strings.Contains(msg, tt.mention) {
					t.Errorf("message %q does not mention %q", msg, tt.mention)
				}
			})
		}
	}
	// The id may be sent on update when it is the record's own.
	e.must(req{Method: "PUT", Path: "/api/acme/re/" + id, Body: body("requirement", "id", id, "field_101", "y")}, http.StatusOK)
}

// A write is read only as XML: an XML media type (with any parameters), or no Content-Type at all as existing
// clients send; any other type is 415 naming it.
func TestWriteContentType(t *testing.T) {
	e := start(t, fixedClock())
	id := e.create("/api2", "re", body("requirement", "field_101", "x"))
	tests := []struct {
		contentType string
		status      int // of a create; an update answers 200 where a create answers 201
	}{
		{"application/xml", http.StatusCreated},
		{"application/xml; charset=utf-8", http.StatusCreated},
		{"Application/XML;charset=\"UTF-8\"", http.StatusCreated},
		{"text/xml", http.StatusCreated},
		{"application/vnd.acme.requirement+xml", http.StatusCreated},
		{"", http.StatusCreated}, // none at all
		{"application/json", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"text/plain; charset=utf-8", http.StatusUnsupportedMediaType},
		{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType},
		{"text/xml+json", http.StatusUnsupportedMediaType},
		{"application/", http.StatusUnsupportedMediaType},
		{"xml", http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		for _, method := range []string{"POST", "PUT"} {
			t.Run(method+" "+tt.contentType, func(t *testing.T) {
				e := e.on(t)
				path, want := "/api2/acme/re", tt.status
				if method == "PUT" {
					path += "/" + id
					if want == http.StatusCreated {
						want = http.StatusOK
					}
				}
				res := e.must(req{Method: method, Path: path, Body: body("requirement", "field_101", "y"),
					Header: map[string]string{"Content-Type": tt.contentType}}, want)
				if want != http.StatusUnsupportedMediaType {
					return
				}
				msg := errorMessage(t, res.Body)
				if !strings.Contains(msg, "Content-Type") || !strings.Contains(msg, "application/xml") {
					t.Errorf("message %q does not name the Content-Type and the one to send", msg)
				}
			})
		}
	}
}

// A write in another encoding than UTF-8 is read when the core knows the encoding (a byte-order mark, the
// XML declaration, or the Content-Type's charset says which), and otherwise refused with a message naming
// the encoding, never as XML that is not well formed.
func TestWriteEncodings(t *testing.T) {
	e := start(t, fixedClock())
	doc := func(decl, title string) string {
		return decl + "<requirement><fields><field><name>field_101</name><value>" + title +
			"</value></field></fields></requirement>"
	}
	tests := []struct {
		name, body, contentType string
		title                   string // read back; "" when refused
		mention                 string // in the refusal
	}{
		{"utf-8 byte-order mark", "\xef\xbb\xbf" + doc(`<?xml version="1.0" encoding="UTF-8"?>`, "Caf\xc3\xa9"), "", "Café", ""},
		{"iso-8859-1 declared", doc(`<?xml version="1.0" encoding="ISO-8859-1"?>`, "Caf\xe9"), "", "Café", ""},
		{"windows-1252 declared", doc(`<?xml version="1.0" encoding="windows-1252"?>`, "\x80 5"), "", "€ 5", ""},
		{"iso-8859-1 by charset", doc("", "Caf\xe9"), "application/xml; charset=ISO-8859-1", "Café", ""},
		{"unsupported declared", doc(`<?xml version="1.0" encoding="Shift_JIS"?>`, "x"), "", "", "The encoding Shift_JIS is not supported"},
		{"unsupported charset", doc("", "x"), "text/xml; charset=koi8-r", "", "The encoding koi8-r is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.on(t)
			r := req{Method: "POST", Path: "/api2/acme/re", Body: tt.body}
			if tt.contentType != "" {
				r.Header = map[string]string{"Content-Type": tt.contentType}
			}
			if tt.title == "" {
				msg := errorMessage(t, e.must(r, http.StatusUnsupportedMediaType).Body)
				if !strings.Contains(msg, tt.mention) || strings.Contains(msg, "well formed") || strings.Contains(msg, "xml:") {
					t.Errorf("message %q, want one that says %q", msg, tt.mention)
				}
				return
			}
			loc := e.must(r, http.StatusCreated).Header.Get("Location")
			got := testsupport.RecordValues(t, e.must(req{Path: "/api2/acme/re/" + loc[strings.LastIndexByte(loc, '/')+1:]}, http.StatusOK).Body)
			if got["field_101"] != tt.title {
				t.Errorf("title read back %q, want %q", got["field_101"], tt.title)
			}
		})
	}
}

// twoValues is a requirement body whose one field, name, holds the given <value> elements.
func twoValues(name, values string) string {
	return "<requirement><fields><field><name>" + name + "</name>" + values + "</field></fields></requirement>"
}

// Credentials are checked before anything else: a missing record, an unknown path and an unknown key all
// give 401 without valid credentials.
func TestAuthentication(t *testing.T) {
	e := start(t, fixedClock())
	tests := []struct {
		name, path, user, pass string
		noAuth                 bool
		status                 int
	}{
		{"no credentials", "/api/acme/user", "", "", true, 401},
		{"wrong password", "/api/acme/user", "alice", "nope", false, 401},
		{"unknown user", "/api/acme/user", "mallory", "alice-secret", false, 401},
		{"unknown key", "/api/nokey/user", "alice", "alice-secret", false, 401},
		{"key of a form no account has", "/api/no.key%21/user", "alice", "alice-secret", false, 401},
		{"user of another account", "/api/acme/user", "zed", "zed-secret", false, 401},
		{"empty password", "/api/acme/user", "alice", "", false, 401},
		{"unknown path without credentials", "/api/acme/nothing/here", "", "", true, 401},
		{"missing record without credentials", "/api2/acme/re/999", "", "", true, 401},
		{"valid", "/api/acme/user", "alice", "alice-secret", false, 200},
		{"valid v2", "/api2/acme/user", "bob", "bob-secret", false, 200},
		{"other account", "/api/other/user", "zed", "zed-secret", false, 200},
		{"wrong password after success", "/api/acme/user", "alice", "alice-secret2", false, 401},
		{"valid again", "/api/acme/user", "alice", "alice-secret", false, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.on(t)
			res := e.must(req{Path: tt.path, User: tt.user, Pass: tt.pass, NoAuth: tt.noAuth}, tt.status)
			if tt.status != 401 {
				return
			}
			if got, want := res.Header.Get("WWW-Authenticate"), `Basic realm="reqgate"`; got != want {
				t.Errorf("WWW-Authenticate %q, want %q", got, want)
			}
			errorMessage(t, res.Body)
		})
	}
}

// A verified credential is remembered for AuthTTL: a changed password takes effect after the TTL (or a
// flush), and a wrong password is never remembered as right.
func TestCredentialCache(t *testing.T) {
	c := testsupport.NewClock(time.Unix(1700000000, 0))
	e := start(t, api.Options{Now: c.Now, AuthTTL: time.Minute})
	e.must(req{Path: "/api/acme/user"}, http.StatusOK)

	p := testProvision(t)
	p.Accounts = p.Accounts[:1]
	p.Accounts[0].Users = []core.UserSpec{user(t, 5, "alice", "alice@acme.test", "Alice", "Archer", "new-secret")}
	if err := e.Store.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	e.must(req{Path: "/api/acme/user"}, http.StatusOK) // still remembered
	e.must(req{Path: "/api/acme/user", User: "alice", Pass: "new-secret"}, http.StatusOK)
	c.Add(time.Minute)
	e.must(req{Path: "/api/acme/user"}, http.StatusUnauthorized) // expired: checked again
	e.must(req{Path: "/api/acme/user", User: "alice", Pass: "new-secret"}, http.StatusOK)
	e.API.FlushCaches()
	e.must(req{Path: "/api/acme/user", User: "alice", Pass: "new-secret"}, http.StatusOK)
}

// A remembered credential that expired is checked against the store again, but the bcrypt comparison is not
// repeated while the user's hash is the one it was proved against: the core's CPU is not spent once per TTL on
// every credential in use. A changed password, a deactivated user and a wrong password are still refused.
func TestCredentialRecheckWithoutBcrypt(t *testing.T) {
	c := testsupport.NewClock(time.Unix(1700000000, 0))
	e := start(t, api.Options{Now: c.Now, AuthTTL: time.Minute})
	var compared atomic.Int64
	api.CountComparisons(e.API, &compared)
	step := func(name string, r req, status int, comparisons int64) {
		t.Helper()
		e.on(t).must(r, status)
		if got := compared.Load(); got != comparisons {
			t.Fatalf("%s: %d bcrypt comparisons in all, want %d", name, got, comparisons)
		}
	}
	step("first use", req{Path: "/api/acme/user"}, http.StatusOK, 1)
	step("remembered", req{Path: "/api/acme/user"}, http.StatusOK, 1)
	c.Add(time.Minute)
	step("expired, hash unchanged", req{Path: "/api/acme/user"}, http.StatusOK, 1)
	c.Add(2 * time.Minute)
	step("expired again", req{Path: "/api/acme/user"}, http.StatusOK, 1)
	step("wrong password", req{Path: "/api/acme/user", User: "alice", Pass: "guess"}, http.StatusUnauthorized, 2)

	apply := func(u core.UserSpec) {
		t.Helper()
		p := testProvision(t)
		p.Accounts = p.Accounts[:1]
		p.Accounts[0].Users = []core.UserSpec{u}
		if err := e.Store.Apply(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		e.API.FlushCaches()
	}
	renewed := user(t, 5, "alice", "alice@acme.test", "Alice", "Archer", "new-secret")
	apply(renewed)
	step("old password, hash changed", req{Path: "/api/acme/user"}, http.StatusUnauthorized, 3)
	step("new password", req{Path: "/api/acme/user", User: "alice", Pass: "new-secret"}, http.StatusOK, 4)
	c.Add(time.Minute)
	step("new password, expired", req{Path: "/api/acme/user", User: "alice", Pass: "new-secret"}, http.StatusOK, 4)

	inactive := renewed // the same hash, which the credential was proved against
	inactive.Status = "Inactive"
	apply(inactive)
	step("deactivated", req{Path: "/api/acme/user", User: "alice", Pass: "new-secret"}, http.StatusUnauthorized, 4)
}

// Unknown URIs, versions and ids give 404 (after authentication); wrong methods 405 with Allow, the methods of
// the route table.
func TestRouting(t *testing.T) {
	e := start(t, fixedClock())
	e.create("/api", "re", body("requirement", "field_101", "x"))
	tests := []struct {
		name, method, path string
		noAuth             bool
		status             int
		allow              string
	}{
		{"unknown top", "GET", "/nothing", true, 404, ""},
		{"no key", "GET", "/api/", true, 404, ""},
		{"version 3", "GET", "/api3/acme/re/1", false, 404, ""},
		{"version word", "GET", "/apix/acme/re/1", false, 404, ""},
		{"key only", "GET", "/api/acme", false, 404, ""},
		{"key slash", "GET", "/api/acme/", false, 404, ""},
		{"unknown segment", "GET", "/api/acme/zz/1", false, 404, ""},
		{"id not integer", "GET", "/api/acme/re/abc", false, 404, ""},
		{"id zero", "GET", "/api/acme/re/0", false, 404, ""},
		{"id negative", "GET", "/api/acme/re/-1", false, 404, ""},
		{"missing record", "GET", "/api/acme/re/999", false, 404, ""},
		{"deep path", "GET", "/api/acme/re/1/x/y", false, 404, ""},
		{"empty segment", "GET", "/api/acme/re//1", false, 404, ""},
		{"v2 only in v1", "GET", "/api/acme/re/1/related", false, 404, ""},
		{"custom object in v1", "GET", "/api/acme/risk/field", false, 404, ""},
		{"record found", "GET", "/api/acme/re/1", false, 200, ""},
		{"trailing slash", "GET", "/api/acme/re/1/", false, 200, ""},
		{"api1 is version 1", "GET", "/api1/acme/re/1", false, 200, ""},
		{"head", "HEAD", "/api/acme/re/1", false, 200, ""},
		{"list of records", "GET", "/api/acme/re", false, 405, "POST"},
		{"post to record", "POST", "/api/acme/re/1", false, 405, "GET, PUT, DELETE"},
		{"put field list", "PUT", "/api/acme/re/field", false, 405, "GET"},
		{"post user", "POST", "/api/acme/user", false, 405, "GET"},
		{"user deep", "GET", "/api/acme/user/5/x", false, 404, ""},
		{"user by word", "GET", "/api/acme/user/alice", false, 404, ""},
		// One order for every route of the table: a path that names nothing in the version is 404 (no route, an
		// unknown kind, an {id} that is no record id), then a method the route does not serve is 405, then
		// what the route's handler does not find is 404.
		{"other method, unknown kind", "PATCH", "/api/acme/zz/1", false, 404, ""},
		{"other method, unreadable id", "POST", "/api/acme/re/abc", false, 404, ""},
		{"other method, unknown kind's fields", "PUT", "/api2/acme/zz/field", false, 404, ""},
		{"other method, unknown kind's views", "POST", "/api2/acme/zz/view", false, 404, ""},
		{"other method, unreadable id's related", "POST", "/api2/acme/re/abc/related", false, 404, ""},
		{"other method, missing record", "PATCH", "/api/acme/re/999", false, 405, "GET, PUT, DELETE"},
		{"other method, view", "PUT", "/api2/acme/re/view/999", false, 405, "GET"},
		{"other method, user", "POST", "/api/acme/user/alice", false, 405, "GET"},
		{"other method, no route", "POST", "/api/acme/user/5/x", false, 404, ""},
		{"other method, v2 only in v1", "POST", "/api/acme/re/1/related", false, 404, ""},
		{"object list in v1", "GET", "/api/acme/object", false, 404, ""},
		{"the gateway's route", "GET", "/api2/acme/rate_throttle_status", false, 404, ""},
		{"the gateway's route, other method", "POST", "/api2/acme/rate_throttle_status", false, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.on(t)
			res := e.must(req{Method: tt.method, Path: tt.path, NoAuth: tt.noAuth}, tt.status)
			if got := res.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
			if tt.status >= 400 {
				errorMessage(t, res.Body)
			}
		})
	}
}

// A 404 names what does not exist: the record with the prefix the interface shows, the view, the field, the
// user, the object.
func TestNotFoundMessages(t *testing.T) {
	e := start(t, fixedClock())
	id := e.create("/api2", "re", body("requirement", "field_101", "x"))
	e.must(req{Method: "DELETE", Path: "/api2/acme/re/" + id}, http.StatusOK)
	tests := []struct {
		method, path, body, want string
	}{
		{"GET", "/api2/acme/re/999", "", "The record RE-999 does not exist."},
		{"GET", "/api/acme/uc/999", "", "The record UC-999 does not exist."},
		{"GET", "/api2/acme/re/" + id, "", "The record RE-" + id + " does not exist."}, // deleted
		{"PUT", "/api/acme/ft/999", body("feature", "field_201", "x"), "The record FT-999 does not exist."},
		{"DELETE", "/api2/acme/risk/999", "", "The record CO-999 does not exist."},
		{"GET", "/api2/acme/re/999/related", "", "The record RE-999 does not exist."},
		{"GET", "/api2/acme/re/abc/related", "", "The record RE-abc does not exist."},
		{"GET", "/api2/acme/re/999/fieldhistory/101", "", "The record RE-999 does not exist."},
		{"GET", "/api2/acme/re/" + id + "/fieldhistory/101", "", "The record RE-" + id + " does not exist."},
		{"GET", "/api2/acme/risk/1/fieldhistory/101", "", "The field 101 of risk does not exist."},
		{"GET", "/api2/acme/re/view/99", "", "The view 99 of re does not exist."},
		{"GET", "/api2/acme/ft/view/99/search?created_by=5", "", "The view 99 of ft does not exist."},
		{"GET", "/api/acme/user/99", "", "The user 99 does not exist."},
		{"GET", "/api2/acme/user/nobody@acme.test", "", "No user has the email address nobody@acme.test."},
		{"GET", "/api2/acme/zz/1", "", "The object zz does not exist."},
		{"GET", "/api/acme/risk/1", "", "The object risk does not exist in version 1; custom objects need version 2 (/api2/)."},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			e := e.on(t)
			res := e.must(req{Method: tt.method, Path: tt.path, Body: tt.body}, http.StatusNotFound)
			if got := errorMessage(t, res.Body); got != tt.want {
				t.Errorf("message %q, want %q", got, tt.want)
			}
		})
	}
}

// Bodies above MaxBodyBytes get 413, announced by Content-Length or found while reading a chunked body.
func TestBodyTooLarge(t *testing.T) {
	e := start(t, api.Options{MaxBodyBytes: 1024})
	big := body("requirement", "field_101", "x", "field_102", strings.Repeat("a", 2000))
	e.must(req{Method: "POST", Path: "/api/acme/re", Body: big}, http.StatusRequestEntityTooLarge)

	// Chunked: no Content-Length, so the limit is found while reading.
	r, err := http.NewRequest("POST", e.URL+"/api/acme/re", io.MultiReader(strings.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	r.SetBasicAuth("alice", "alice-secret")
	r.ContentLength = -1
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if got, want := res.StatusCode, http.StatusRequestEntityTooLarge; got != want {
		t.Fatalf("chunked: status %d, want %d: %s", got, want, b)
	}
	if got := res.TransferEncoding; len(r.TransferEncoding) == 0 && got != nil {
		t.Logf("transfer encoding %v", got)
	}
	errorMessage(t, string(b))

	// Just under the limit is fine.
	e.must(req{Method: "POST", Path: "/api/acme/re", Body: body("requirement", "field_101", "x")}, http.StatusCreated)
}

// /healthz and /readyz answer without credentials.
func TestHealth(t *testing.T) {
	e := start(t, fixedClock())
	for _, path := range []string{"/healthz", "/readyz"} {
		e.must(req{Path: path, NoAuth: true}, http.StatusOK)
	}
	e.Store.Close()
	e.must(req{Path: "/healthz", NoAuth: true}, http.StatusOK)
	e.must(req{Path: "/readyz", NoAuth: true}, http.StatusServiceUnavailable)
}

// A user whose status is no longer Active is refused like a deleted one, once the remembered credential
// expires (or the caches are flushed, as an account-file change does).
func TestInactiveUserRefused(t *testing.T) {
	e := start(t, fixedClock())
	e.must(req{Path: "/api/acme/user", User: "bob", Pass: "bob-secret"}, http.StatusOK)
	p := testProvision(t)
	p.Accounts = p.Accounts[:1]
	for i := range p.Accounts[0].Users {
		if p.Accounts[0].Users[i].Username == "bob" {
			p.Accounts[0].Users[i].Status = "Inactive"
		}
	}
	if err := e.Store.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	e.API.FlushCaches()
	e.must(req{Path: "/api/acme/user", User: "bob", Pass: "bob-secret"}, http.StatusUnauthorized)
	e.must(req{Path: "/api2/acme/re/1", User: "bob", Pass: "bob-secret"}, http.StatusUnauthorized)
	e.must(req{Path: "/api/acme/user", User: "alice", Pass: "alice-secret"}, http.StatusOK)
}
