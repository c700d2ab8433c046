package config

import (
	"strings"
	"testing"
)

// TestPasswordFiles checks that a Redis or PostgreSQL password can come from a file named by a flag, the
// environment or the config file, so that it is never on the command line, and that the URL the process
// dials carries it while Print does not.
func TestPasswordFiles(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret-pw\n")
	for _, tc := range []struct {
		name      string
		role      string
		args, env []string
		redis     string
		dsn       string
	}{
		{name: "redis flag", role: RoleGateway, args: []string{"--redis", "redis://10.0.0.5:6379/2", "--redis-password-file", pw},
			redis: "redis://:s3cret-pw@10.0.0.5:6379/2"},
		{name: "redis env, user kept", role: RoleGateway,
			env:   []string{"REQGATE_REDIS_URL=rediss://app@10.0.0.5:6380/0", "REQGATE_REDIS_PASSWORD_FILE=" + pw},
			redis: "rediss://app:s3cret-pw@10.0.0.5:6380/0"},
		{name: "postgres flag", role: RoleCore, args: []string{"--db", "postgres://reqgate@db:5432/reqgate?sslmode=require", "--db-password-file", pw},
			dsn: "postgres://reqgate:s3cret-pw@db:5432/reqgate?sslmode=require"},
		{name: "postgres env", role: RoleServe, env: []string{"REQGATE_DB=postgresql://reqgate@db/reqgate", "REQGATE_DB_PASSWORD_FILE=" + pw},
			dsn: "postgresql://reqgate:s3cret-pw@db/reqgate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustLoad(t, tc.role, tc.args, tc.env)
			if tc.redis != "" {
				if got, err := c.RedisURL(); err != nil || got != tc.redis {
					t.Errorf("RedisURL() = %q, %v; want %q", got, err, tc.redis)
				}
			}
			if tc.dsn != "" {
				if got, err := c.StoreDSN(); err != nil || got != tc.dsn {
					t.Errorf("StoreDSN() = %q, %v; want %q", got, err, tc.dsn)
				}
			}
			var b strings.Builder
			if err := c.Print(&b); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "s3cret") {
				t.Errorf("Print shows the password:\n%s", b.String())
			}
		})
	}
}

// TestSecretFileRefusals checks that a secret file that cannot serve is refused at start with its key, and
// that the refusal never shows the secret.
func TestSecretFileRefusals(t *testing.T) {
	pw := writeFile(t, "pw", "s3cret-pw\n")
	empty := writeFile(t, "empty", "\n")
	twoLines := writeFile(t, "two", "s3cret-pw\nmore\n")
	for _, tc := range []struct {
		name string
		role string
		args []string
		want string
	}{
		{"token file missing", RoleGateway, []string{"--set", "admin.token_file=/nonexistent/token"}, "admin.token_file"},
		{"token file empty", RoleGateway, []string{"--set", "admin.token_file=" + empty}, "admin.token_file"},
		{"token with a line break", RoleServe, []string{"--set", "admin.token_file=" + twoLines}, "white space"},
		{"redis password without redis", RoleGateway, []string{"--redis-password-file", pw}, "needs redis.url"},
		{"redis password twice", RoleGateway, []string{"--redis", "redis://:other@h:6379/0", "--redis-password-file", pw}, "names a password already"},
		{"redis password file empty", RoleGateway, []string{"--redis", "redis://h:6379/0", "--redis-password-file", empty}, "redis.password_file"},
		{"sqlite has no password", RoleServe, []string{"--db", "/tmp/r.db", "--db-password-file", pw}, "only for a postgres"},
		{"postgres password twice", RoleCore, []string{"--db", "postgres://u:other@db/r", "--db-password-file", pw}, "names a password already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.role, tc.args, nil)
			if err == nil {
				t.Fatalf("Load(%q) accepted", tc.args)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "other@") {
				t.Errorf("error shows a password: %q", err)
			}
		})
	}
}

// TestRedact checks the masking of the arguments /debug/pprof/cmdline shows.
func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, secret string }{
		{"--redis=redis://:pw1@10.0.0.5:6379/0", "pw1"},
		{"redis://user:pw2@10.0.0.5:6379/0", "pw2"},
		{"--db=postgres://u:pw3@db:5432/r?sslmode=disable", "pw3"},
		{"postgres://u@db/r?password=pw4", "pw4"},
		{"redis.url=rediss://u:p%40w5@h:6380/1", "p%40w5"},
		{"host=db user=u password=pw6", "pw6"},
	} {
		if got := Redact(tc.in); strings.Contains(got, tc.secret) || !strings.Contains(got, masked) {
			t.Errorf("Redact(%q) = %q", tc.in, got)
		}
	}
	if got := Redact("/var/lib/reqgate/r.db"); got != "/var/lib/reqgate/r.db" {
		t.Errorf("Redact changed an argument without a password: %q", got)
	}
}
