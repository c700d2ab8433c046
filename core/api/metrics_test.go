package api_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// Requests are counted by route class (the route table's, the gateway's label of the same request), method and
// status, and timed in a Prometheus histogram; a request that fails authentication keeps its route's class.
func TestMetrics(t *testing.T) {
	e := start(t, fixedClock())
	e.must(req{Path: "/api/acme/re/424242"}, http.StatusNotFound)
	e.must(req{Path: "/api/acme/user/5"}, http.StatusOK)
	e.must(req{Path: "/api/acme/user", NoAuth: true}, http.StatusUnauthorized)
	e.must(req{Method: "PATCH", Path: "/api/acme/re/424242"}, http.StatusMethodNotAllowed)
	e.must(req{Path: "/api/acme/re/1/x/y"}, http.StatusNotFound)
	var b bytes.Buffer
	metrics.WritePrometheus(&b, false)
	for _, want := range []string{
		`reqgate_core_requests_total{route="record",method="GET",code="404"}`,
		`reqgate_core_requests_total{route="user",method="GET",code="200"}`,
		`reqgate_core_requests_total{route="users",method="GET",code="401"}`,
		`reqgate_core_requests_total{route="record",method="OTHER",code="405"}`,
		`reqgate_core_requests_total{route="unknown",method="GET",code="404"}`,
		`reqgate_core_request_seconds_bucket{route="record",method="GET",le="`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// An account's schema is cached for SchemaTTL; a stale one is served once while it reloads, and a change
// shows afterwards.
func TestSchemaCache(t *testing.T) {
	c := testsupport.NewClock(time.Unix(1700000000, 0))
	e := start(t, api.Options{Now: c.Now, SchemaTTL: 10 * time.Second, AuthTTL: time.Hour})
	e.must(req{Path: "/api/acme/user/6"}, http.StatusOK)

	p := testProvision(t)
	p.Accounts = p.Accounts[:1]
	p.Accounts[0].Users = append(p.Accounts[0].Users, user(t, 8, "dan", "dan@acme.test", "Dan", "Dunn", "bob-secret"))
	if err := e.Store.Apply(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	e.must(req{Path: "/api/acme/user/8"}, http.StatusNotFound) // cached
	c.Add(25 * time.Second)
	e.must(req{Path: "/api/acme/user/8"}, http.StatusOK) // too old to serve stale: reloaded
	e.API.FlushCaches()
	e.must(req{Path: "/api/acme/user/8"}, http.StatusOK)
}
