package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/docexample"
	"github.com/reqgate/reqgate/internal/testbin"
)

// docServers are the servers the examples of docs/api.md run against, by the name a page gives in
// `<!-- example server: NAME -->` ("" is the default): `reqgate serve` with its demo account, and the
// configuration the page describes around the example.
var docServers = map[string]string{
	// The page's CORS example comes from this origin.
	"": "cors:\n  allowed_origins: [https://app.example.com]\n",
	// The mirrored service's throttle as the page gives it, with 5 minutes for its 10 s period so that no
	// call leaves the window however slow the machine: the shape of every answer is the same (the headers'
	// numbers are not compared), and the block, not the window, sets the time to wait.
	"throttle": "ratelimit:\n  reject_status: 503\n  policies:\n" +
		"    - {name: account, key: api_key, limit: 25, period: 5m, algorithm: window, block: 10m}\n",
}

// TestAPIDocExamples runs every curl example of docs/api.md, in the page's order, against real `reqgate serve`
// processes, and checks each answer against the one the page shows: status, the headers shown, the shape of
// the body (internal/docexample describes the convention and what is compared). A command with no answer
// shown must succeed (2xx) unless its comment names another status.
func TestAPIDocExamples(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := docexample.Parse(md)
	if err != nil {
		t.Fatalf("docs/api.md: %v", err)
	}
	if len(examples) < 20 {
		t.Fatalf("docs/api.md has %d examples; the page or its convention changed", len(examples))
	}
	dir := t.TempDir()
	addrs := map[string]string{}
	for _, ex := range examples {
		cfg, ok := docServers[ex.Server]
		if !ok {
			t.Fatalf("docs/api.md:%d: no example server %q", ex.Line, ex.Server)
		}
		if _, started := addrs[ex.Server]; started {
			continue
		}
		name := ex.Server
		if name == "" {
			name = "default"
		}
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		listen := testbin.FreeAddr(t)
		p := start(t, "serve", "--listen", listen, "--admin-listen", "off", "--db", filepath.Join(dir, name+".db"),
			"--config", file)
		waitReady(t, p, "http://"+listen+"/readyz")
		addrs[ex.Server] = listen
	}

	client := docexample.NewClient()
	sessions := map[string]*docexample.Session{}
	for name, addr := range addrs {
		sessions[name] = &docexample.Session{Client: client, Addr: addr, Dir: dir}
	}
	for _, ex := range examples {
		t.Run(fmt.Sprintf("line_%d", ex.Line), func(t *testing.T) {
			s := sessions[ex.Server]
			for i, cmd := range ex.Commands {
				res, err := s.Run(t.Context(), cmd)
				if err != nil {
					t.Fatalf("docs/api.md:%v", err)
				}
				last := i == len(ex.Commands)-1
				switch {
				case cmd.Status != 0:
					if res.Status != cmd.Status {
						t.Errorf("docs/api.md:%d: %s\nstatus %d, the page says %d; body %.300q", cmd.Line, cmd.Text,
							res.Status, cmd.Status, res.Body)
					}
				case last && ex.Expect != nil:
				case res.Status < 200 || res.Status > 299:
					t.Errorf("docs/api.md:%d: %s\nstatus %d, want a success as the page shows no other; body %.300q",
						cmd.Line, cmd.Text, res.Status, res.Body)
				}
				if last && ex.Expect != nil {
					if diffs := s.Check(ex.Expect, res); len(diffs) > 0 {
						t.Errorf("docs/api.md:%d: %s\nthe answer differs from the one at docs/api.md:%d:\n  %s",
							cmd.Line, cmd.Text, ex.Expect.Line, strings.Join(diffs, "\n  "))
					}
				}
			}
		})
	}
}
