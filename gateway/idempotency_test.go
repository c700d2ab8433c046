package gateway

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestIdempotencyKeyThroughGateways sends a create through one gateway and retries it with the same
// Idempotency-Key through another, in XML and JSON: one record, and the retry names it at the address it was
// sent to. The key reused for another body is refused with 422 in the caller's format, and a browser may send
// the key.
func TestIdempotencyKeyThroughGateways(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"https://app.example"}
	a, b := startGateway(t, opt), startGateway(t, opt)
	path := func(loc string) string {
		u, err := url.Parse(loc)
		if err != nil || u.Path == "" {
			t.Fatalf("Location %q: %v", loc, err)
		}
		return u.Path
	}
	for _, tc := range []struct{ name, ctype, body, other string }{
		{"xml", "application/xml", `<requirement><fields><field><name>field_101</name><value>Idem XML</value></field></fields></requirement>`,
			`<requirement><fields><field><name>field_101</name><value>Other</value></field></fields></requirement>`},
		{"json", "application/json", `{"requirement":{"fields":{"field":[{"name":"field_101","value":"Idem JSON"}]}}}`,
			`{"requirement":{"fields":{"field":[{"name":"field_101","value":"Other"}]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{"Content-Type: " + tc.ctype, "Accept: " + tc.ctype, "Idempotency-Key: key-" + tc.name}
			first := do(t, http.MethodPost, a.URL+"/api2/demo/re", "demo", "demo", tc.body, hdr...)
			retry := do(t, http.MethodPost, b.URL+"/api2/demo/re", "demo", "demo", tc.body, hdr...)
			if first.Status != http.StatusCreated || retry.Status != http.StatusCreated {
				t.Fatalf("create %d, retry %d (%s)", first.Status, retry.Status, retry.Body)
			}
			if p, q := path(first.Header.Get("Location")), path(retry.Header.Get("Location")); p != q {
				t.Errorf("Locations %s and %s name two records", p, q)
			}
			if !strings.HasPrefix(retry.Header.Get("Location"), b.URL+"/") {
				t.Errorf("the retry's Location %q is not at the gateway it was sent to (%s)", retry.Header.Get("Location"), b.URL)
			}
			if retry.Header.Get("Idempotent-Replayed") != "true" {
				t.Error("the retry is not marked Idempotent-Replayed")
			}
			ids := get(t, a.URL+"/api2/demo/re/search?created_time>1000000000", "Cache-Control: no-cache").Body
			if n := strings.Count(ids, "<title>Idem "+strings.ToUpper(tc.name)+"</title>"); n != 1 {
				t.Errorf("%d records made by one create retried, want 1", n)
			}
			reuse := do(t, http.MethodPost, b.URL+"/api2/demo/re", "demo", "demo", tc.other, hdr...)
			if reuse.Status != http.StatusUnprocessableEntity || !strings.Contains(reuse.Body, "different request") ||
				!strings.HasPrefix(reuse.Header.Get("Content-Type"), tc.ctype) {
				t.Errorf("key reused: %d %s %s, want 422 in %s", reuse.Status, reuse.Header.Get("Content-Type"), reuse.Body, tc.ctype)
			}
		})
	}
	pre := do(t, http.MethodOptions, a.URL+"/api2/demo/re", "", "", "", "Origin: https://app.example",
		"Access-Control-Request-Method: POST", "Access-Control-Request-Headers: idempotency-key")
	if !strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Idempotency-Key") ||
		!strings.Contains(pre.Header.Get("Access-Control-Expose-Headers"), "Idempotent-Replayed") {
		t.Errorf("a browser may not send Idempotency-Key or read Idempotent-Replayed: %d %v", pre.Status, pre.Header)
	}
}
