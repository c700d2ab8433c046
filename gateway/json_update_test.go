package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestJSONUpdate updates a record with a JSON body through the gateway: the core gets XML, the cached
// read of the record is invalidated, and the next JSON read shows the new value and version.
func TestJSONUpdate(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	const accept = "Accept: application/json"

	before := get(t, gw.URL+"/api2/demo/re/8", accept)
	if before.Status != 200 || !strings.Contains(before.Body, `"name":"version_number"`) {
		t.Fatalf("JSON read: status=%d body=%q", before.Status, before.Body)
	}
	body := `{"requirement":{"fields":{"field":[{"name":"field_101","value":"Updated <as> JSON & more"}]}}}`
	res := do(t, http.MethodPut, gw.URL+"/api2/demo/re/8", "demo", "demo", body, accept,
		"Content-Type: application/json")
	if got, want := res.Status, 200; got != want {
		t.Fatalf("PUT: status=%d, want %d (%q)", got, want, res.Body)
	}
	after := get(t, gw.URL+"/api2/demo/re/8", accept)
	if got, want := after.Header.Get("X-Cache"), "MISS"; got != want {
		t.Errorf("read after the update: X-Cache=%q, want %q", got, want)
	}
	if !strings.Contains(after.Body, `"value":"Updated <as> JSON & more"`) {
		t.Errorf("read after the update does not show the new title: %q", after.Body)
	}
	// The XML the core stored escapes what JSON carried.
	if xml := get(t, c.URL+"/api2/demo/re/8").Body; !strings.Contains(xml, "Updated &lt;as&gt; JSON &amp; more") {
		t.Errorf("core's XML: %q", xml)
	}
}

// TestJSONUpdateUnknownKey: a key of a JSON field the interface does not know reaches the core as an element
// of <field>, which refuses it; it is never dropped, and the record stays as it was.
func TestJSONUpdateUnknownKey(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	const accept = "Accept: application/json"

	before := get(t, c.URL+"/api2/demo/re/8").Body
	for _, body := range []string{
		`{"requirement":{"fields":{"field":[{"name":"field_101","value":"Renamed","colour":"red"}]}}}`,
		`{"requirement":{"fields":{"field":[{"name":"field_101","vaule":"Renamed"}]}}}`,
	} {
		res := do(t, http.MethodPut, gw.URL+"/api2/demo/re/8", "demo", "demo", body, accept,
			"Content-Type: application/json")
		if res.Status != 400 || !strings.Contains(res.Body, "unexpected element") {
			t.Errorf("PUT %s: status=%d body=%q, want 400 naming the unexpected element", body, res.Status, res.Body)
		}
	}
	if after := get(t, c.URL+"/api2/demo/re/8").Body; after != before {
		t.Errorf("a refused update changed the record:\n%s\nto\n%s", before, after)
	}
}
