package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestServeXMLWriteWithoutContentType: `reqgate serve` applies an XML write sent with no Content-Type, as
// legacy clients of the interface send it.
func TestServeXMLWriteWithoutContentType(t *testing.T) {
	listen := testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", "off", "--db", filepath.Join(t.TempDir(), "r.db"))
	waitReady(t, p, "http://"+listen+"/readyz")
	req, err := http.NewRequest(http.MethodPost, "http://"+listen+"/api2/demo/re",
		strings.NewReader(`<requirement><fields><field><name>field_101</name><value>Legacy</value></field></fields></requirement>`))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("demo", "demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST without Content-Type: %d %s, want 201", resp.StatusCode, b)
	}
	if r, body := do(t, http.MethodGet, resp.Header.Get("Location"), "demo", ""); r.StatusCode != http.StatusOK ||
		!strings.Contains(body, "<value>Legacy</value>") {
		t.Errorf("the record written without Content-Type: %d %s", r.StatusCode, body)
	}
}
