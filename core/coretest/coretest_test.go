package coretest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

func get(t *testing.T, c *coretest.Core, method, path, user, pass, body string) (int, http.Header, string) {
	t.Helper()
	r := testsupport.Do(t, http.DefaultClient, method, c.URL+path, user, pass, body)
	return r.Status, r.Header, r.Body
}

// The demo core serves its records, and what was created survives a restart on the same port and file.
func TestDemoStartRestart(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	if !strings.HasPrefix(c.URL, "http://127.0.0.1:") || c.DBPath == "" || c.Store == nil {
		t.Fatalf("Core = %+v", c)
	}
	if code, _, body := get(t, c, "GET", "/api/demo/re/field", "demo", "demo", ""); code != 200 {
		t.Fatalf("GET field list: %d %s", code, body)
	}
	if code, _, body := get(t, c, "GET", "/api/demo/user", "viewer", "viewer", ""); code != 200 {
		t.Fatalf("GET users as viewer: %d %s", code, body)
	}
	code, h, body := get(t, c, "POST", "/api2/demo/re", "demo", "demo",
		"<requirement><fields><field><name>field_101</name><value>survives</value></field></fields></requirement>")
	if code != 201 {
		t.Fatalf("POST: %d %s", code, body)
	}
	loc := h.Get("Location")
	path := strings.TrimPrefix(loc, c.URL)
	if path == loc {
		t.Fatalf("Location %q is not under %s", loc, c.URL)
	}
	url := c.URL
	c.Restart(t)
	if c.URL != url {
		t.Fatalf("URL after restart %s, want %s", c.URL, url)
	}
	code, _, body = get(t, c, "GET", path, "demo", "demo", "")
	if code != 200 || !strings.Contains(body, "<value>survives</value>") {
		t.Fatalf("GET %s after restart: %d\n%s", path, code, body)
	}
	c.Stop()
	c.Stop()
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Fatalf("core still answers after Stop")
	}
}

// A core started from an account file serves that account.
func TestAccountsYAML(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: `
accounts:
  - api_key: acme-7f3a
    name: Acme Corp
    users:
      - {id: 5, username: alice, password: alice-secret, email: alice@acme.test, firstname: Alice, lastname: Archer}
`})
	code, _, body := get(t, c, "GET", "/api/acme-7f3a/user/5", "alice", "alice-secret", "")
	if code != 200 || !strings.Contains(body, "<username>alice</username>") {
		t.Fatalf("GET user: %d\n%s", code, body)
	}
	if code, _, _ := get(t, c, "GET", "/api/demo/user", "demo", "demo", ""); code != 401 {
		t.Fatalf("demo account exists in a core started from a file: %d", code)
	}
}
