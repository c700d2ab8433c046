package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCheckFile(t *testing.T) {
	tests := []struct {
		name, content string
		want          string // "" = valid; else the error, with F for the path
	}{
		{"contract example", contractExample, ""},
		{"empty file", "", ""},
		{"only comments", "# nothing\n", ""},
		{"null document", "~\n", ""},
		{"empty sections", "cache:\nratelimit:\n  policies: []\n", ""},
		{"shipped example", readShipped(t), ""},
		{"bad value", "cache:\n  scope: team\n", `F:2: cache.scope: must be one of account, user, not "team"`},
		{"refusals after an unknown key", "cahce:\n  ttl: 1s\nserver:\n  max_body_bytes: 2MiB\n  body_budget: 1MiB\n",
			"F:1: cahce: unknown key (did you mean \"cache\"?)\nF:5: server.body_budget: must be >= server.max_body_bytes (2097152)"},
		{"two refusals", "ratelimit:\n  reject_status: 418\n  on_redis_error: panic\n",
			"F:2: ratelimit.reject_status: must be 429 or 503, not 418\nF:3: ratelimit.on_redis_error: must be one of local, allow, deny, not \"panic\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "c.yaml", tt.content)
			want := strings.ReplaceAll(tt.want, "F:", path+":")
			if want == "" {
				want = "<nil>"
			}
			if got := errString(CheckFile(path)); got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
	if err := CheckFile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("CheckFile of a missing file succeeded")
	}
}

// readShipped returns the example config shipped with the project, if it exists yet.
func readShipped(t *testing.T) string {
	data, err := os.ReadFile("testdata/reqgate.example.yaml")
	if err != nil {
		t.Fatalf("read the shipped example: %v", err)
	}
	return string(data)
}

func TestRunCommand(t *testing.T) {
	good := writeFile(t, "good.yaml", contractExample)
	bad := writeFile(t, "bad.yaml", "cache:\n  ttl: x\n")
	tests := []struct {
		name           string
		args           []string
		environ        []string
		code           int
		stdout, stderr string // substrings
	}{
		{"check ok", []string{"check", good}, nil, 0, good + ": ok\n", ""},
		{"check bad", []string{"check", good, bad}, nil, 1, good + ": ok\n", bad + `:2: cache.ttl: bad duration "x"`},
		{"check without file", []string{"check"}, nil, 2, "", "Usage:"},
		{"check help", []string{"check", "--help"}, nil, 0, "Usage: reqgate config check FILE...", ""},
		{"check -h after a file", []string{"check", good, "-h"}, nil, 0, "Usage: reqgate config check FILE...", ""},
		{"check unknown option", []string{"check", "--strict", good}, nil, 2, "", `unknown option "--strict"`},
		{"check after --", []string{"check", "--", good}, nil, 0, good + ": ok\n", ""},
		{"print gateway", []string{"print", "gateway", "--config", good, "--redis", "redis://:pw@r:1/0"}, []string{"REQGATE_SERVICE_HOST=x"}, 0,
			"  url: redis://:xxxxx@r:1/0 # from flag --redis", "warning: unknown environment variable REQGATE_SERVICE_HOST ignored"},
		{"print default role", []string{"print"}, nil, 0, "# reqgate serve: effective configuration", ""},
		{"print refused", []string{"print", "core", "--db", "mysql://x"}, nil, 1, "", "flag --db: db: unsupported store"},
		{"print help", []string{"print", "gateway", "--help"}, nil, 0, "Usage: reqgate gateway [flags]", ""},
		{"unknown", []string{"lint"}, nil, 2, "", `unknown config command "lint"`},
		{"nothing", nil, nil, 2, "", "Usage:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := RunCommand(tt.args, tt.environ, &out, &errOut)
			if got, want := code, tt.code; got != want {
				t.Errorf("exit code %d, want %d; stderr: %s", got, want, errOut.String())
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, out.String())
			}
			if !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, errOut.String())
			}
		})
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		role      string
		want, not []string
	}{
		{RoleServe, []string{"--listen ADDR", "default 127.0.0.1:8080", "environment REQGATE_LISTEN", "--db DSN", "--accounts FILE",
			"--redis URL", "environment REQGATE_REDIS_URL or REQGATE_REDIS", "--config FILE", "environment REQGATE_CONFIG", "--set KEY=VALUE", "cache.ttl"},
			[]string{"--upstream"}},
		{RoleCore, []string{"default 127.0.0.1:8081", "--db DSN", "--accounts FILE", "--redis URL"}, []string{"--upstream"}},
		{RoleGateway, []string{"--upstream URL", "environment REQGATE_UPSTREAM_URL or REQGATE_UPSTREAM", "--redis URL", "--admin-listen ADDR"},
			[]string{"--db", "--accounts"}},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			u := Usage(tt.role)
			for _, w := range tt.want {
				if !strings.Contains(u, w) {
					t.Errorf("usage lacks %q:\n%s", w, u)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(u, n) {
					t.Errorf("usage has %q:\n%s", n, u)
				}
			}
		})
	}
}

// TestShippedExampleShowsDefaults keeps the example file honest: apart from its one policy it states the defaults.
func TestShippedExampleShowsDefaults(t *testing.T) {
	c := mustLoad(t, RoleServe, []string{"--config", "testdata/reqgate.example.yaml"}, nil)
	c.RateLimit.Policies = nil
	want := Default(RoleServe)
	c.sources, c.ConfigFile = nil, ""
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("example differs from the defaults\ngot  %+v\nwant %+v", c, want)
	}
}
