package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestXMLWriteWithoutContentType: legacy clients send XML writes with no Content-Type at all, which the core
// reads as XML; the gateway forwards them as they are (without inventing one) and they are applied.
func TestXMLWriteWithoutContentType(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	post := do(t, http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo",
		`<requirement><fields><field><name>field_101</name><value>No type</value></field></fields></requirement>`, "Content-Type:")
	if post.Status != http.StatusCreated {
		t.Fatalf("POST without Content-Type: %d %s, want 201", post.Status, post.Body)
	}
	loc := post.Header.Get("Location")
	put := do(t, http.MethodPut, loc, "demo", "demo",
		`<requirement><fields><field><name>field_101</name><value>Still no type</value></field></fields></requirement>`,
		"Content-Type:")
	if put.Status != http.StatusOK {
		t.Fatalf("PUT without Content-Type: %d %s, want 200", put.Status, put.Body)
	}
	if got := get(t, loc).Body; !strings.Contains(got, "<value>Still no type</value>") {
		t.Errorf("the write without Content-Type was not applied: %s", got)
	}
}
