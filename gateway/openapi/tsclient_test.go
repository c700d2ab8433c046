package openapi_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestTypeScriptClient is a web frontend's view of the document: `reqgate serve` runs as an operator runs it,
// openapi-typescript generates types from the /openapi.json it serves, tsc --strict type-checks
// tsclient/client.ts against them (a key the document leaves optional would not compile where the script reads
// it as present), and Node runs the compiled client, which sends its requests with openapi-fetch: it reads a
// record and a user, creates a record, updates it, finds it by a picklist condition and a time range (with a
// client told the document's style of field_conditions, and with openapi-fetch's defaults through q alone),
// reads a refused search's error as JSON, and deletes it. The packages are those tsclient/package-lock.json
// pins, installed by make deps.
func TestTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Node, the TypeScript client's packages and the reqgate binary; make test runs it, make check (-short) does not")
	}
	src, err := filepath.Abs("tsclient")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run make deps, which installs Node.js and the TypeScript client's packages")
	}
	modules := filepath.Join(src, "node_modules")
	for _, p := range []string{"openapi-typescript/bin/cli.js", "typescript/bin/tsc", "openapi-fetch/package.json", "@types/node/package.json"} {
		if _, err := os.Stat(filepath.Join(modules, p)); err != nil {
			t.Fatalf("%s is missing: run make deps, which installs the TypeScript client's packages (npm ci in gateway/openapi/tsclient)",
				filepath.Join("gateway/openapi/tsclient/node_modules", p))
		}
	}

	_, addr := testbin.Serve(t, "REQGATE_LOG_LEVEL=warn")
	base := "http://" + addr

	dir := t.TempDir()
	for _, f := range []string{"client.ts", "tsconfig.json", "package.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	doc := get(t, base+"/openapi.json", "", 200)
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), node, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(nil, "node_modules/openapi-typescript/bin/cli.js", "openapi.json", "-o", "openapi.d.ts")
	run(nil, "node_modules/typescript/bin/tsc", "-p", ".")
	out := run([]string{"REQGATE_URL=" + base, "REQGATE_KEY=demo", "REQGATE_USER=demo", "REQGATE_PASSWORD=demo"}, filepath.Join("out", "client.js"))
	t.Logf("the TypeScript client:\n%s", out)
	if !strings.HasSuffix(out, "\nok\n") {
		t.Fatalf("the TypeScript client did not finish: %s", out)
	}
	// What the client did is there for any other client to see: the record it created is deleted.
	m := regexp.MustCompile(`(?m)^created ([0-9]+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the client named no record it created: %s", out)
	}
	get(t, base+"/api2/demo/re/"+m[1], "demo", 404)
	if deleted := get(t, base+"/api2/demo/re/search?deleted_time>1000000000", "demo", 200); !strings.Contains(string(deleted), "<id>"+m[1]+"</id>") {
		t.Errorf("requirement %s is not among the deleted records:\n%s", m[1], deleted)
	}
}

// get reads url, with the credentials of user (password the same) unless user is "", and wants status.
func get(t *testing.T, url, user string, status int) []byte {
	t.Helper()
	r := testsupport.Do(t, httpClient, http.MethodGet, url, user, user, "")
	if r.Status != status {
		t.Fatalf("GET %s: %d, want %d\n%s", url, r.Status, status, r.Body)
	}
	return []byte(r.Body)
}
