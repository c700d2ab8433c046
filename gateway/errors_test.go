package gateway

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/wire"
)

// The gateway's error body is the core's, byte for byte, for the same message: the core is asked for a
// field that does not exist, whose name (from the path) it repeats in its message.
func TestErrorBodyIsTheCores(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	for _, tt := range []struct{ name, field string }{
		{"plain", "nofield"},
		{"markup and quotes", `<b>&"it's"<i>`}, // no "/": the core splits the path on it, %2F or not
		{"line ends and tabs", "a\r\nb\rc\nd\te"},
		{"characters XML cannot carry", "bell\x07nul\x00bad\xff\uFFFE"},
		{"unicode", "ünïcødé 😀"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := do(t, http.MethodGet, c.URL+"/api2/demo/re/1/fieldhistory/"+url.PathEscape(tt.field), "demo", "demo", "")
			if res.Status != http.StatusNotFound {
				t.Fatalf("core: status %d, want 404\n%s", res.Status, res.Body)
			}
			msg := "The field " + tt.field + " of re does not exist."
			if got := string(wire.ErrorXML(msg)); got != res.Body {
				t.Errorf("gateway error body for %q:\n%q\nthe core's:\n%q", msg, got, res.Body)
			}
		})
	}
}
