package config

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestPrintMasksSecrets checks that no password of the Redis, PostgreSQL or upstream URLs reaches the output.
func TestPrintMasksSecrets(t *testing.T) {
	tests := []struct {
		name     string
		role     string
		args     []string
		environ  []string
		want     string // a line of the output
		notWants []string
	}{
		{name: "redis password", role: RoleGateway, args: []string{"--redis", "redis://:s3cret@redis:6379/0"},
			want: "  url: redis://:xxxxx@redis:6379/0 # from flag --redis", notWants: []string{"s3cret"}},
		{name: "redis user and password from env", role: RoleServe, environ: []string{"REQGATE_REDIS_URL=rediss://default:hunter2@r.example:6380/1"},
			want: "  url: rediss://default:xxxxx@r.example:6380/1 # from env REQGATE_REDIS_URL", notWants: []string{"hunter2"}},
		{name: "postgres password", role: RoleCore, args: []string{"--db", "postgres://reqgate:pa55@db:5432/reqgate?sslmode=disable"},
			want: "db: postgres://reqgate:xxxxx@db:5432/reqgate?sslmode=disable # from flag --db", notWants: []string{"pa55"}},
		{name: "postgres password parameter", role: RoleCore, args: []string{"--db", "postgres://db/reqgate?user=u&password=pa55"},
			want: "db: postgres://db/reqgate?password=xxxxx&user=u # from flag --db", notWants: []string{"pa55"}},
		{name: "upstream userinfo", role: RoleGateway, args: []string{"--upstream", "http://a:1,http://u:pw99@b:2"},
			want: "  url: http://a:1,http://u:xxxxx@b:2 # from flag --upstream", notWants: []string{"pw99"}},
		{name: "sqlite path untouched", role: RoleCore, args: []string{"--db", "/var/lib/reqgate/reqgate.db"},
			want: "db: /var/lib/reqgate/reqgate.db # from flag --db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.role, tt.args, tt.environ)
			var b bytes.Buffer
			if err := c.Print(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !containsLine(out, tt.want) {
				t.Errorf("output lacks line %q:\n%s", tt.want, out)
			}
			for _, nw := range tt.notWants {
				if strings.Contains(out, nw) {
					t.Errorf("output shows %q:\n%s", nw, out)
				}
			}
		})
	}
}

func containsLine(out, line string) bool {
	for _, l := range strings.Split(out, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// TestPrintRoundTrip checks that the printed configuration, read back as a config file, gives the same
// configuration: Print writes every key in the file's own form.
func TestPrintRoundTrip(t *testing.T) {
	file := writeFile(t, "in.yaml", contractExample+`server:
  read_timeout: 1h30m
  max_body_bytes: 3000
log: {level: debug, format: json}
accounts: [a.yaml, "b c.yaml"]
listen: "[::1]:8080"
admin_listen: "off"
db: "postgres://db/reqgate"
redis: {url: "redis://r:6379/2", timeout: 250ms}
`)
	for _, role := range allRoles {
		t.Run(role, func(t *testing.T) {
			c := mustLoad(t, role, []string{"--config", file}, []string{"REQGATE_CACHE_ENABLED=false"})
			var b bytes.Buffer
			if err := c.Print(&b); err != nil {
				t.Fatal(err)
			}
			back := writeFile(t, "out.yaml", b.String())
			c2 := mustLoad(t, role, []string{"--config", back}, nil)
			c.sources, c2.sources, c.ConfigFile, c2.ConfigFile = nil, nil, "", ""
			if !reflect.DeepEqual(c, c2) {
				t.Fatalf("round trip changed the config\nprinted:\n%s\ngot  %+v\nwant %+v", b.String(), c2, c)
			}
		})
	}
}

func TestPrintDefault(t *testing.T) {
	var b bytes.Buffer
	if err := Default(RoleCore).Print(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"# reqgate core: effective configuration (passwords masked)",
		"listen: 127.0.0.1:8081",
		"  max_body_bytes: 1MiB",
		"  stale_if_error: 5m",
		"  policies: []",
		"  allowed_origins: []",
	} {
		if !containsLine(b.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, b.String())
		}
	}
}

func TestMask(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis://:pw@h:6379/0", "redis://:xxxxx@h:6379/0"},
		{"redis://user@h:6379", "redis://user@h:6379"},
		{"redis://h:6379", "redis://h:6379"},
		{"unix:///run/redis.sock", "unix:///run/redis.sock"},
		{"postgres://u:p%40ss@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:bad%zz@h/db", "postgres://xxxxx@h/db"},
		{"host=db password=pw user=u", "host=db password=xxxxx user=u"},
		{"./data/reqgate.db", "./data/reqgate.db"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := mask(tt.in); got != tt.want {
			t.Errorf("mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
