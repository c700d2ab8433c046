package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/gateway/openapi"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
)

const jsonAccept = "Accept: application/json"

// step is one exchange of TestJSONInterface.
type step struct {
	name string
	call
	status int
	// invalid: the request is one the document does not allow (no credentials, a broken body), sent for the
	// error; only the response is validated.
	invalid bool
	check   func(t *testing.T, r reply)
}

// TestJSONInterface drives a real gateway in front of the real core through every read and write of the
// interface in JSON, and its main errors, and validates each request and each response against the document.
func TestJSONInterface(t *testing.T) {
	v := newValidator(t)
	l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{Policies: []ratelimit.Policy{
		{Name: "account", Key: "api_key", Limit: 100000, Burst: 100000, Period: time.Minute}}}))
	if err != nil {
		t.Fatal(err)
	}
	base := start(t, l)

	get := func(path string, headers ...string) call {
		return call{method: "GET", path: path, user: "demo", pass: "demo", headers: append([]string{jsonAccept}, headers...)}
	}
	with := func(method, path, body string) call {
		return call{method: method, path: path, user: "demo", pass: "demo", body: body, headers: []string{jsonAccept}}
	}
	hasHeader := func(names ...string) func(*testing.T, reply) {
		return func(t *testing.T, r reply) {
			for _, n := range names {
				if r.header.Get(n) == "" {
					t.Errorf("no %s header", n)
				}
			}
		}
	}
	var etag, created, createdTag string
	riskWrite := `{"custom_object": {"fields": {"field": [` +
		`{"name": "field_401", "value": "Vendor outage"}, {"name": "field_402", "value": 3}, ` +
		`{"name": "field_404", "value": true}, {"name": "field_409", "value": 7}, {"name": "field_413", "value": "1,3"}, ` +
		`{"name": "field_410", "value": "<p>Fail <b>over</b>.</p>"}]}}}`

	steps := []step{
		{name: "the document", call: call{method: "GET", path: "/openapi.json"}, status: 200,
			check: func(t *testing.T, r reply) {
				if !bytes.Equal(r.body, openapi.JSON()) {
					t.Error("GET /openapi.json differs from openapi.JSON()")
				}
			}},
		{name: "objects", call: get("/api2/demo/object"), status: 200},
		{name: "users", call: get("/api2/demo/user"), status: 200},
		{name: "user by id", call: get("/api2/demo/user/1"), status: 200},
		{name: "users by email", call: get("/api2/demo/user/team@reqgate.test"), status: 200},
		{name: "user by email v1", call: get("/api/demo/user/demo@reqgate.test"), status: 200},
		{name: "record miss", call: get("/api2/demo/re/1"), status: 200, check: func(t *testing.T, r reply) {
			hasHeader("X-Request-Id", "X-Cache", "ETag", "RateLimit", "RateLimit-Policy")(t, r)
			etag = r.header.Get("ETag")
		}},
		{name: "record hit", call: get("/api2/demo/re/1"), status: 200, check: func(t *testing.T, r reply) {
			if got := r.header.Get("X-Cache"); got != "HIT" {
				t.Errorf("X-Cache=%q, want HIT", got)
			}
			hasHeader("Age")(t, r)
		}},
		{name: "record not modified", status: 304},
		{name: "record v1", call: get("/api/demo/re/1"), status: 200},
		{name: "feature", call: get("/api2/demo/ft/2"), status: 200},
		{name: "use case", call: get("/api2/demo/uc/1"), status: 200},
		{name: "custom object record", call: get("/api2/demo/risk/1"), status: 200},
		{name: "custom object record with every field set", call: get("/api2/demo/risk/2"), status: 200},
		{name: "field list", call: get("/api2/demo/re/field"), status: 200},
		{name: "field list v1", call: get("/api/demo/uc/field"), status: 200},
		{name: "custom object field list", call: get("/api2/demo/risk/field"), status: 200},
		{name: "views", call: get("/api2/demo/re/view"), status: 200},
		{name: "view", call: get("/api2/demo/risk/view/2"), status: 200},
		{name: "view search", call: get("/api2/demo/re/view/1/search?created_by=1"), status: 200},
		{name: "view search, empty", call: get("/api2/demo/re/view/1/search?created_by=999"), status: 200},
		{name: "search by picklist and user", call: get("/api2/demo/re/search?field_103=1&created_by=2"), status: 200},
		{name: "search by time", call: get("/api2/demo/risk/search?created_time>1735000000&created_time%3C1900000000"), status: 200},
		{name: "search by q", call: get("/api2/demo/re/search?field_103=1&q=created_time%3E1000000000&q=last_updated_time%3C9999999999&q=created_by%3D1"), status: 200},
		{name: "view search by q", call: get("/api2/demo/re/view/1/search?q=created_time%3E1000000000"), status: 200},
		{name: "search by textbox", call: get("/api2/demo/ft/search?last_updated_by=1"), status: 200},
		{name: "search of deleted records", call: get("/api2/demo/re/search?deleted_time>1000000000"), status: 200},
		{name: "related", call: get("/api2/demo/re/1/related"), status: 200},
		{name: "related, none", call: get("/api2/demo/ft/8/related"), status: 200},
		{name: "related of a custom object", call: get("/api2/demo/risk/1/related"), status: 200},
		{name: "history of a picklist", call: get("/api2/demo/re/1/fieldhistory/103"), status: 200},
		{name: "history of a multiple picklist", call: get("/api2/demo/re/1/fieldhistory/106"), status: 200},
		{name: "history of a user picklist", call: get("/api2/demo/re/1/fieldhistory/104"), status: 200},
		{name: "history of rich text", call: get("/api2/demo/re/1/fieldhistory/102"), status: 200},
		{name: "history, none", call: get("/api2/demo/ft/2/fieldhistory/201"), status: 200},
		{name: "throttle status", call: get("/api2/demo/rate_throttle_status"), status: 200},

		{name: "create", call: with("POST", "/api2/demo/risk", riskWrite), status: 201, check: func(t *testing.T, r reply) {
			created = r.header.Get("Location")
			if !strings.Contains(created, "/api2/demo/risk/") {
				t.Errorf("Location %q", created)
			}
		}},
		{name: "read the created record", status: 200, check: func(t *testing.T, r reply) { createdTag = r.header.Get("ETag") }},
		{name: "update", status: 200},
		{name: "update with a stale ETag", status: 412},
		{name: "delete", status: 200},
		{name: "delete again", status: 409},
		{name: "read the deleted record", status: 404},
		{name: "create v1", call: with("POST", "/api/demo/re", `{"requirement": {"fields": {"field": [{"name": "field_101", "value": "Via v1"}, {"name": "version_comment", "value": "first"}]}}}`), status: 201},
		{name: "update v1", call: with("PUT", "/api/demo/re/2", `{"requirement": {"fields": {"field": {"name": "field_103", "value": "3"}}}}`), status: 200},

		{name: "no credentials", call: call{method: "GET", path: "/api2/demo/re/1", headers: []string{jsonAccept}}, status: 401, invalid: true,
			check: hasHeader("WWW-Authenticate")},
		{name: "wrong password", call: call{method: "GET", path: "/api2/demo/re/1", user: "demo", pass: "wrong", headers: []string{jsonAccept}}, status: 401},
		{name: "unknown key", call: call{method: "GET", path: "/api2/nobody/re/1", user: "demo", pass: "demo", headers: []string{jsonAccept}}, status: 401},
		{name: "missing record", call: get("/api2/demo/re/9999"), status: 404},
		{name: "missing user", call: get("/api2/demo/user/nobody@reqgate.test"), status: 404},
		{name: "missing view", call: get("/api2/demo/re/view/99"), status: 404},
		{name: "unknown object", call: get("/api2/demo/nothing/1"), status: 404},
		{name: "invalid field", call: with("PUT", "/api2/demo/re/1", `{"requirement": {"fields": {"field": [{"name": "field_999", "value": "x"}]}}}`), status: 400},
		{name: "invalid picklist value", call: with("PUT", "/api2/demo/re/1", `{"requirement": {"fields": {"field": [{"name": "field_103", "value": "99"}]}}}`), status: 400},
		{name: "missing required field", call: with("POST", "/api2/demo/risk", `{"custom_object": {"fields": {"field": [{"name": "field_408", "value": "no title"}]}}}`), status: 400},
		{name: "malformed JSON", call: with("PUT", "/api2/demo/re/1", `{"requirement": {"fields": `), status: 400, invalid: true},
		{name: "JSON without an XML form", call: with("PUT", "/api2/demo/re/1", `{"requirement": [1, 2]}`), status: 400, invalid: true},
		{name: "XML that is not well formed", call: call{method: "PUT", path: "/api2/demo/re/1", user: "demo", pass: "demo",
			body: "<requirement><fields>", headers: []string{jsonAccept, "Content-Type: application/xml"}}, status: 415, invalid: true},
		{name: "a body too large", call: with("PUT", "/api2/demo/re/1", `{"requirement": {"fields": {"field": [{"name": "field_101", "value": "`+
			strings.Repeat("x", 70<<10)+`"}]}}}`), status: 413},
		{name: "bad search condition", call: get("/api2/demo/re/search?created_time=5"), status: 400},
		{name: "search of an unknown field", call: get("/api2/demo/re/search?field_999=1"), status: 400},
	}
	for i := range steps {
		s := &steps[i]
		t.Run(s.name, func(t *testing.T) {
			switch s.name {
			case "record not modified":
				s.call = get("/api2/demo/re/1", "If-None-Match: "+etag)
			case "read the created record":
				s.call = get(strings.TrimPrefix(created, base))
			case "update", "update with a stale ETag":
				s.call = with("PUT", strings.TrimPrefix(created, base), `{"custom_object": {"fields": {"field": [{"name": "field_402", "value": "4"}]}}}`)
				s.headers = append(s.headers, "If-Match: "+createdTag)
			case "delete", "delete again":
				s.call = call{method: "DELETE", path: strings.TrimPrefix(created, base), user: "demo", pass: "demo", headers: []string{jsonAccept}}
			case "read the deleted record":
				s.call = get(strings.TrimPrefix(created, base))
			}
			if s.path == "" || strings.HasPrefix(s.path, "http") {
				t.Fatalf("no path (Location %q)", created)
			}
			r := send(t, base, s.call)
			if r.status != s.status {
				t.Fatalf("%s %s: status %d, want %d: %.300s", s.method, s.path, r.status, s.status, r.body)
			}
			if len(r.body) > 0 && s.path != "/openapi.json" {
				if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || !json.Valid(r.body) {
					t.Errorf("Content-Type %q, body %.200q: want JSON", ct, r.body)
				}
			}
			validate(t, v, base, s.call, r, !s.invalid)
			if s.check != nil {
				s.check(t, r)
			}
		})
	}
}

// TestJSONThrottled validates the rejections of a rate limit, with either status an operator may choose.
func TestJSONThrottled(t *testing.T) {
	v := newValidator(t)
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{RejectStatus: status, Policies: []ratelimit.Policy{
				{Name: "account", Key: "api_key", Limit: 1, Burst: 1, Period: time.Minute}}}))
			if err != nil {
				t.Fatal(err)
			}
			base := start(t, l)
			c := call{method: "GET", path: "/api2/demo/re/1", user: "demo", pass: "demo", headers: []string{jsonAccept}}
			for i, want := range []int{200, status} {
				r := send(t, base, c)
				if r.status != want {
					t.Fatalf("call %d: status %d, want %d", i, r.status, want)
				}
				validate(t, v, base, c, r, true)
				if want == status && (r.header.Get("Retry-After") == "" || !bytes.Contains(r.body, []byte(`"try_again_after"`))) {
					t.Errorf("rejection without Retry-After or try_again_after: %v %s", r.header, r.body)
				}
			}
			tc := call{method: "GET", path: "/api2/demo/rate_throttle_status", user: "demo", pass: "demo", headers: []string{jsonAccept}}
			r := send(t, base, tc)
			if r.status != 200 || !bytes.Contains(r.body, []byte(`"api_available":"no"`)) {
				t.Errorf("throttle status: %d %s", r.status, r.body)
			}
			validate(t, v, base, tc, r, true)
		})
	}
}
