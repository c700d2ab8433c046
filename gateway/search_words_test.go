package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestSearchWordThroughGateway: a Textbox search for a word of another script reaches the core through the
// gateway, percent-encoded or raw, and finds the record titled with it.
func TestSearchWordThroughGateway(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	body := "<requirement><fields><field><name>field_101</name><value>Été</value></field></fields></requirement>"
	if res := do(t, http.MethodPut, gw.URL+"/api2/demo/re/8", "demo", "demo", body); res.Status != 200 {
		t.Fatalf("PUT: status=%d body=%q", res.Status, res.Body)
	}
	for _, q := range []string{"field_101=%C3%A9t%C3%A9", "field_101=été", "field_101=%C3%89T%C3%89"} {
		res := get(t, gw.URL+"/api2/demo/re/search?"+q, "Cache-Control: no-cache")
		if res.Status != 200 || !strings.Contains(res.Body, "<id>8</id>") || strings.Count(res.Body, "<id>") != 1 {
			t.Errorf("search %s: status=%d body=%q, want RE-8 alone", q, res.Status, res.Body)
		}
	}
}
