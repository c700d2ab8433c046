package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/gateway/openapi"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// TestRouteTableAgreement holds the gateway, the core and the document to the one route table: for every route
// in every version, sent through a real gateway to the real core, the gateway classifies its path as the table
// says; the document has an operation for each method the route serves in the versions that have it, and none
// in the others; a GET or HEAD the route serves is answered (never 404 or 405); every method it does not serve
// is 405 with the table's methods in Allow, counted under the route's class by the gateway and by the core alike
// (the core does not see a route the gateway answers alone); and under a version that lacks the route, every
// method is 404.
func TestRouteTableAgreement(t *testing.T) {
	base := start(t, nil)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(openapi.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	methods := []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"}

	for _, rt := range route.Table() {
		for _, v := range openapi.Versions {
			template := openapi.Base(v) + strings.ReplaceAll(rt.Template, "{segment}", "re")
			t.Run(template, func(t *testing.T) {
				path := concretePath(openapi.Route{Class: rt.Class, Template: template}, 0)
				if p, err := route.Parse([]byte(path)); err != nil || p.Class != rt.Class || p.Version != v {
					t.Errorf("route.Parse(%q): class %q version %d err %v; the table says %q", path, p.Class, p.Version, err, rt.Class)
				}
				has := v >= rt.MinVersion
				for _, m := range methods {
					_, documented := doc.Paths[template][strings.ToLower(m)]
					if serves := has && slices.Contains(rt.Methods, m); documented != serves {
						t.Errorf("%s %s: in the document %v, served %v", m, template, documented, serves)
					}
					if has && rt.Allows(m) && m != "GET" && m != "HEAD" {
						continue // a write the route serves: TestRouteTable sends it with its body
					}
					switch res := send(t, base, call{method: m, path: path, user: "demo", pass: "demo"}); {
					case !has:
						if res.status != http.StatusNotFound {
							t.Errorf("%s %s: status %d, want 404 (a route of version %d): %s", m, path, res.status, rt.MinVersion, res.body)
						}
					case rt.Allows(m):
						if res.status == http.StatusNotFound || res.status == http.StatusMethodNotAllowed {
							t.Errorf("%s %s: status %d, want the route's answer: %s", m, path, res.status, res.body)
						}
					default:
						if res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != rt.Allow() {
							t.Errorf("%s %s: status %d Allow %q, want 405 Allow %q: %s", m, path, res.status,
								res.header.Get("Allow"), rt.Allow(), res.body)
						}
						counted(t, `reqgate_gateway_requests_total{route="`+string(rt.Class)+`",code="405"`)
						if !rt.GatewayOnly && m != "HEAD" { // the gateway asks the core with a GET
							counted(t, `reqgate_core_requests_total{route="`+string(rt.Class)+`",method="`+coreMethod(m)+`",code="405"}`)
						}
					}
				}
			})
		}
	}
}

// coreMethod is the core's method label of m.
func coreMethod(m string) string {
	if m == "PATCH" {
		return "OTHER"
	}
	return m
}

// counted fails the test when no series of the process's metrics starts with series.
func counted(t *testing.T, series string) {
	t.Helper()
	var b bytes.Buffer
	metrics.WritePrometheus(&b, false)
	if !strings.Contains(b.String(), series) {
		t.Errorf("no series %s...", series)
	}
}
