package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/translate"
)

// TestJSONNegotiation reads and writes through the gateway in JSON: bodies are the translate package's form
// of the core's XML, errors are JSON, Vary: Accept is set, and JSON reads are cached as their own entries.
func TestJSONNegotiation(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	const accept = "Accept: application/json"

	xmlBody := get(t, c.URL+"/api2/demo/re/8").Body
	wantJSON, err := translate.XMLToJSON([]byte(xmlBody))
	if err != nil {
		t.Fatal(err)
	}
	for i, wantCache := range []string{"MISS", "HIT"} {
		res := get(t, gw.URL+"/api2/demo/re/8", accept)
		if got, want := res.Status, 200; got != want {
			t.Fatalf("read %d: status=%d, want %d", i, got, want)
		}
		if got, want := res.Body, string(wantJSON); got != want {
			t.Fatalf("read %d: body=%q, want %q", i, got, want)
		}
		if got, want := res.Header.Get("Content-Type"), translate.ContentTypeJSON; got != want {
			t.Errorf("read %d: Content-Type=%q, want %q", i, got, want)
		}
		if got, want := res.Header.Get("X-Cache"), wantCache; got != want {
			t.Errorf("read %d: X-Cache=%q, want %q", i, got, want)
		}
		if !strings.Contains(strings.Join(res.Header.Values("Vary"), ","), "Accept") {
			t.Errorf("read %d: no Vary: Accept", i)
		}
	}
	if got, want := get(t, gw.URL+"/api2/demo/re/8").Body, xmlBody; got != want {
		t.Errorf("XML read after JSON reads: body differs")
	}
	// An XML entry serves a first JSON read without the core.
	get(t, gw.URL+"/api2/demo/re/9")
	before := gw.Stats().UpstreamRequests
	if res := get(t, gw.URL+"/api2/demo/re/9", accept); res.Header.Get("X-Cache") != "HIT" || !json.Valid([]byte(res.Body)) {
		t.Errorf("JSON read of a cached XML entry: X-Cache=%q body=%q", res.Header.Get("X-Cache"), res.Body)
	}
	if got := gw.Stats().UpstreamRequests - before; got != 0 {
		t.Errorf("JSON read of a cached XML entry went upstream %d times", got)
	}

	for _, tc := range []struct {
		name       string
		method     string
		path       string
		user, pass string
		body       string
		wantStatus int
		wantInBody string
	}{
		{"create from JSON", http.MethodPost, "/api2/demo/re", "demo", "demo",
			`{"requirement":{"fields":{"field":[{"name":"field_101","value":"Sent as JSON"}]}}}`, 201, ""},
		{"malformed JSON", http.MethodPost, "/api2/demo/re", "demo", "demo", `{"requirement":`, 400, "line 1"},
		{"wrong password", http.MethodGet, "/api2/demo/re/1", "demo", "nope", "", 401, `"error"`},
		{"missing record", http.MethodGet, "/api2/demo/re/9999", "demo", "demo", "", 404, `"error"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := []string{accept}
			if tc.body != "" {
				headers = append(headers, "Content-Type: application/json")
			}
			res := do(t, tc.method, gw.URL+tc.path, tc.user, tc.pass, tc.body, headers...)
			if got, want := res.Status, tc.wantStatus; got != want {
				t.Fatalf("status=%d, want %d (%q)", got, want, res.Body)
			}
			if res.Body != "" && !json.Valid([]byte(res.Body)) {
				t.Errorf("body is not JSON: %q", res.Body)
			}
			if !strings.Contains(res.Body, tc.wantInBody) {
				t.Errorf("body %q lacks %q", res.Body, tc.wantInBody)
			}
			if tc.wantStatus == 201 {
				loc := strings.TrimPrefix(res.Header.Get("Location"), gw.URL)
				if rd := get(t, gw.URL+loc); !strings.Contains(rd.Body, "Sent as JSON") {
					t.Errorf("record created from JSON reads %q", rd.Body)
				}
			}
		})
	}
}

// TestEmptyJSONBody checks that a write whose JSON body is empty is refused like any malformed JSON: 400, in
// JSON, naming the problem, without reaching the core as an empty XML body.
func TestEmptyJSONBody(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	for _, method := range []string{http.MethodPost, http.MethodPut} {
		url := gw.URL + "/api2/demo/re"
		if method == http.MethodPut {
			url += "/1"
		}
		res := do(t, method, url, "demo", "demo", "", "Content-Type: application/json", "Accept: application/json")
		if res.Status != http.StatusBadRequest || !strings.Contains(res.Body, "invalid JSON") ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s with an empty JSON body: %d %s %q", method, res.Status, res.Header.Get("Content-Type"), res.Body)
		}
	}
}
