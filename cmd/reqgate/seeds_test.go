package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
)

// seedAccounts seeds two requirements; RE-1 leaves out field_103 (Status of the standard template, whose
// default option is 1 Pending Review).
const seedAccounts = `
accounts:
  - api_key: seeds
    name: Seeds
    users:
      - {id: 1, username: alice, password: alice, email: alice@seeds.test}
    records:
      - {kind: re, id: 1, created_by: alice, fields: {field_101: Seeded title}}
      - {kind: re, id: 2, created_by: alice, fields: {field_101: Seeded and deleted, field_103: 2}}
`

// TestSeedRecordsKeepClientChanges updates one seeded record and deletes another over HTTP, then makes the
// core apply its account file again twice: a SIGHUP after the file changed the values of both records and
// added a third, then a restart on the same SQLite file. Seed records are created when absent only: the
// update and the delete stay, the new record is created, and seed records get the picklist defaults a
// create through the interface gets.
func TestSeedRecordsKeepClientChanges(t *testing.T) {
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts.yaml")
	writeFile(t, accounts, seedAccounts)
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	args := []string{"core", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(dir, "core.db"),
		"--accounts", accounts}
	p := start(t, args...)
	waitReady(t, p, "http://"+admin+"/readyz")
	base := "http://" + listen + "/api2/seeds/re"

	if resp, body := do(t, http.MethodGet, base+"/1", "alice", ""); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, `<value id="1">Pending Review</value>`) {
		t.Errorf("seeded RE-1 without a status: %d, want 200 with the default status Pending Review:\n%s", resp.StatusCode, body)
	}
	resp, body := do(t, http.MethodPost, base, "alice",
		`<requirement><fields><field><name>field_101</name><value>Created</value></field></fields></requirement>`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, http.MethodGet, base+"/3", "alice", ""); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, `<value id="1">Pending Review</value>`) {
		t.Errorf("created RE-3 without a status: %d, want 200 with the default status Pending Review:\n%s", resp.StatusCode, body)
	}
	resp, body = do(t, http.MethodPut, base+"/1", "alice",
		`<requirement><fields><field><name>field_101</name><value>Title by the client</value></field></fields></requirement>`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT RE-1: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, http.MethodDelete, base+"/2", "alice", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE RE-2: %d %s", resp.StatusCode, body)
	}

	readBack := func(when string) {
		t.Helper()
		resp, body := do(t, http.MethodGet, base+"/1", "alice", "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<value>Title by the client</value>") ||
			!strings.Contains(body, "<name>version_number</name>\n<label>Version Number (Auto-generated)</label>\n<value>2</value>") {
			t.Errorf("RE-1 %s: %d, want 200 with the client's title at version 2:\n%s", when, resp.StatusCode, body)
		}
		resp, body = do(t, http.MethodGet, base+"/1/fieldhistory/101", "alice", "")
		if n := strings.Count(body, "<history>"); resp.StatusCode != http.StatusOK || n != 1 {
			t.Errorf("history of RE-1's title %s: %d with %d changes, want the client's one:\n%s", when, resp.StatusCode, n, body)
		}
		if resp, body := do(t, http.MethodGet, base+"/2", "alice", ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("RE-2, deleted by the client, %s: %d, want 404:\n%s", when, resp.StatusCode, body)
		}
	}
	readBack("before any reload")

	changed := strings.NewReplacer("Seeded title", "The file's new title", "Seeded and deleted", "Seeded again").
		Replace(seedAccounts) + "      - {kind: re, id: 7, created_by: alice, fields: {field_101: Seeded later}}\n"
	writeFile(t, accounts, changed)
	(&reloadNode{p: p, admin: admin}).reload(t, "applied", 1)
	readBack("after SIGHUP applied a changed file")
	if resp, body := do(t, http.MethodGet, base+"/7", "alice", ""); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, "<value>Seeded later</value>") {
		t.Errorf("RE-7, new in the file: %d, want 200:\n%s", resp.StatusCode, body)
	}

	if err := p.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	p2 := start(t, args...)
	waitReady(t, p2, "http://"+admin+"/readyz")
	readBack("after a restart")
}

// writeFile replaces path with text atomically (a new file renamed over it), as an editor does.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}
