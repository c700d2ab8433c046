package openapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/gateway/openapi"
	"github.com/reqgate/reqgate/internal/wire/route"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
)

// concretePath fills the templates of r's path with what exists in account(); id replaces {id} when not 0.
func concretePath(r openapi.Route, id int) string {
	s := sample["re"]
	if r.Kind != nil {
		s = sample[r.Kind.Segment]
	}
	if id == 0 {
		id = s.id
	}
	p := strings.NewReplacer("{api_key}", "demo", "{api_prefix}", s.segment, "{id}", strconv.Itoa(id),
		"{view_id}", strconv.Itoa(s.view), "{field_id}", strconv.Itoa(s.field), "{id_or_email}", "1").Replace(r.Template)
	if r.Class == route.Search || r.Class == route.ViewSearch {
		p += "?created_time>1000000000"
	}
	return p
}

// writeBody is a JSON record write of r's kind.
func writeBody(r openapi.Route, title string) string {
	s := sample[r.Kind.Segment]
	return fmt.Sprintf(`{%q: {"fields": {"field": [{"name": %q, "value": %q}]}}}`, r.Kind.Root, s.title, title)
}

// TestRouteTable checks the route table against the real core behind a real gateway: every route answers
// with its documented status in both faces (XML, and JSON validated against the document), the gateway
// classifies its path as the table says, and paths outside the table are 404.
func TestRouteTable(t *testing.T) {
	v := newValidator(t)
	l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{Policies: []ratelimit.Policy{
		{Name: "account", Key: "api_key", Limit: 100000, Burst: 100000, Period: time.Minute}}}))
	if err != nil {
		t.Fatal(err)
	}
	base := start(t, l)

	// create makes a record of r's kind to delete, and returns its id.
	create := func(t *testing.T, r openapi.Route) int {
		res := send(t, base, call{method: "POST", path: strings.TrimSuffix(concretePath(r, 0), "/"+strconv.Itoa(sample[r.Kind.Segment].id)),
			user: "demo", pass: "demo", body: writeBody(r, "to delete")})
		loc := res.header.Get("Location")
		id, err := strconv.Atoi(loc[strings.LastIndexByte(loc, '/')+1:])
		if res.status != 201 || err != nil {
			t.Fatalf("create a record to delete: %d %q %s", res.status, loc, res.body)
		}
		return id
	}

	for _, r := range openapi.Routes() {
		for _, face := range []string{"xml", "json"} {
			t.Run(r.OperationID+"/"+face, func(t *testing.T) {
				id := 0
				if r.Method == http.MethodDelete {
					id = create(t, r)
				}
				c := call{method: r.Method, path: concretePath(r, id), user: "demo", pass: "demo"}
				if r.Body != "" {
					c.body = writeBody(r, "written by the "+face+" face")
				}
				if face == "json" {
					c.headers = []string{"Accept: application/json"}
				}
				if rt, err := route.Parse([]byte(c.path)); err != nil || rt.Class != r.Class || rt.Version != r.Version {
					t.Errorf("route.Parse(%q): class %q version %d err %v; the table says %q version %d",
						c.path, rt.Class, rt.Version, err, r.Class, r.Version)
				}
				res := send(t, base, c)
				if res.status != r.Status {
					t.Fatalf("%s %s: status %d, want %d: %s", c.method, c.path, res.status, r.Status, res.body)
				}
				ct := res.header.Get("Content-Type")
				switch {
				case len(r.Result) == 0:
					if len(res.body) != 0 {
						t.Errorf("body %q, want none", res.body)
					}
				case face == "xml" && !strings.HasPrefix(ct, "application/xml"),
					face == "json" && !strings.HasPrefix(ct, "application/json"):
					t.Errorf("Content-Type %q in the %s face", ct, face)
				}
				if face == "json" {
					validate(t, v, base, c, res, true)
				}
			})
		}
	}

	// Paths outside the table: the version-2 routes under version 1, and paths the interface does not have.
	var outside []string
	for _, rt := range route.Table() {
		if rt.MinVersion > 1 {
			r := openapi.Route{Class: rt.Class, Template: openapi.Base(1) + strings.ReplaceAll(rt.Template, "{segment}", "re")}
			outside = append(outside, rt.Methods[0]+" "+concretePath(r, 0))
		}
	}
	outside = append(outside,
		"GET /api/demo/risk/1", // custom objects are version 2
		"GET /api2/demo/",
		"GET /api2/demo/nothing/1",
		"GET /api2/demo/re/one",
		"GET /api2/demo/re/1/fields",
		"GET /api2/demo/re/1/related/2",
		"GET /api2/demo/re/view/1/search/more",
		"GET /api2/demo/user/1/related",
		"GET /api2/demo/user/1/fieldhistory/1",
		"GET /api2/demo/re/1/fieldhistory",
		"GET /api3/demo/re/1",
		"GET /api2/demo/object/1",
		"GET /openapi.yaml",
	)
	for _, o := range outside {
		method, path, _ := strings.Cut(o, " ")
		t.Run("outside "+path, func(t *testing.T) {
			for _, accept := range []string{"application/xml", "application/json"} {
				res := send(t, base, call{method: method, path: path, user: "demo", pass: "demo", headers: []string{"Accept: " + accept}})
				if res.status != http.StatusNotFound {
					t.Errorf("%s %s (%s): status %d, want 404: %s", method, path, accept, res.status, res.body)
				}
			}
		})
	}
}
