package config

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestPrecedence checks default < file < env < flag for every kind of key: a contract flag (string and
// repeatable list), and through --set a string, duration, integer, size, boolean and list key.
func TestPrecedence(t *testing.T) {
	type layer struct {
		file string // YAML fragment
		env  string // NAME=value
		flag []string
	}
	kinds := []struct {
		name            string
		role            string
		get             func(*Config) any
		def             any
		file, env, flag layer
		fileV, envV     any
		flagV           any
	}{
		{
			name: "listen (flag)", role: RoleServe, get: func(c *Config) any { return c.Listen }, def: "127.0.0.1:8080",
			file: layer{file: "listen: 127.0.0.1:7001"}, fileV: "127.0.0.1:7001",
			env: layer{env: "REQGATE_LISTEN=127.0.0.1:7002"}, envV: "127.0.0.1:7002",
			flag: layer{flag: []string{"--listen", "127.0.0.1:7003"}}, flagV: "127.0.0.1:7003",
		},
		{
			name: "listen default of core", role: RoleCore, get: func(c *Config) any { return c.Listen }, def: "127.0.0.1:8081",
			file: layer{file: "listen: :7001"}, fileV: ":7001",
			env: layer{env: "REQGATE_LISTEN=:7002"}, envV: ":7002",
			flag: layer{flag: []string{"-listen=:7003"}}, flagV: ":7003",
		},
		{
			name: "admin-listen (flag)", role: RoleGateway, get: func(c *Config) any { return c.AdminListen }, def: "127.0.0.1:9090",
			file: layer{file: "admin_listen: off"}, fileV: "off",
			env: layer{env: "REQGATE_ADMIN_LISTEN=127.0.0.1:9191"}, envV: "127.0.0.1:9191",
			flag: layer{flag: []string{"--admin-listen", "off"}}, flagV: "off",
		},
		{
			name: "db (flag)", role: RoleCore, get: func(c *Config) any { return c.DB }, def: "./data/reqgate.db",
			file: layer{file: "db: /var/lib/reqgate/a.db"}, fileV: "/var/lib/reqgate/a.db",
			env: layer{env: "REQGATE_DB=postgres://u:p@db:5432/reqgate"}, envV: "postgres://u:p@db:5432/reqgate",
			flag: layer{flag: []string{"--db", "b.db"}}, flagV: "b.db",
		},
		{
			name: "accounts (repeatable flag, list)", role: RoleServe, get: func(c *Config) any { return c.Accounts }, def: []string(nil),
			file: layer{file: "accounts: [a.yaml, b.yaml]"}, fileV: []string{"a.yaml", "b.yaml"},
			env: layer{env: "REQGATE_ACCOUNTS=c.yaml, d.yaml"}, envV: []string{"c.yaml", "d.yaml"},
			flag: layer{flag: []string{"--accounts", "e.yaml", "--accounts", "f,g.yaml"}}, flagV: []string{"e.yaml", "f,g.yaml"},
		},
		{
			name: "upstream (flag) via REQGATE_UPSTREAM", role: RoleGateway, get: func(c *Config) any { return c.Upstream.URL }, def: "http://127.0.0.1:8081",
			file: layer{file: "upstream: {url: 'http://core:8081'}"}, fileV: "http://core:8081",
			env: layer{env: "REQGATE_UPSTREAM=http://core-a:8081,http://core-b:8081"}, envV: "http://core-a:8081,http://core-b:8081",
			flag: layer{flag: []string{"--upstream", "https://core.internal"}}, flagV: "https://core.internal",
		},
		{
			name: "redis (flag) via REQGATE_REDIS_URL", role: RoleGateway, get: func(c *Config) any { return c.Redis.URL }, def: "",
			file: layer{file: "redis:\n  url: redis://a:6379/0"}, fileV: "redis://a:6379/0",
			env: layer{env: "REQGATE_REDIS_URL=redis://b:6379/1"}, envV: "redis://b:6379/1",
			flag: layer{flag: []string{"--redis=redis://c:6379/2"}}, flagV: "redis://c:6379/2",
		},
		{
			name: "string key", role: RoleGateway, get: func(c *Config) any { return c.Cache.Scope }, def: "account",
			file: layer{file: "cache: {scope: user}"}, fileV: "user",
			env: layer{env: "REQGATE_CACHE_SCOPE=account"}, envV: "account",
			flag: layer{flag: []string{"--set", "cache.scope=user"}}, flagV: "user",
		},
		{
			name: "duration key", role: RoleGateway, get: func(c *Config) any { return c.Cache.TTL }, def: 30 * time.Second,
			file: layer{file: "cache:\n  ttl: 250ms"}, fileV: 250 * time.Millisecond,
			env: layer{env: "REQGATE_CACHE_TTL=2m"}, envV: 2 * time.Minute,
			flag: layer{flag: []string{"--set", "cache.ttl=1h30m"}}, flagV: 90 * time.Minute,
		},
		{
			name: "integer key", role: RoleGateway, get: func(c *Config) any { return c.RateLimit.RejectStatus }, def: 429,
			file: layer{file: "ratelimit: {reject_status: 503}"}, fileV: 503,
			env: layer{env: "REQGATE_RATELIMIT_REJECT_STATUS=429"}, envV: 429,
			flag: layer{flag: []string{"--set=ratelimit.reject_status=503"}}, flagV: 503,
		},
		{
			name: "size key", role: RoleGateway, get: func(c *Config) any { return c.Cache.MaxBytes }, def: int64(256 << 20),
			file: layer{file: "cache: {max_bytes: 1GiB}"}, fileV: int64(1 << 30),
			env: layer{env: "REQGATE_CACHE_MAX_BYTES=512KiB"}, envV: int64(512 << 10),
			flag: layer{flag: []string{"--set", "cache.max_bytes=1000"}}, flagV: int64(1000),
		},
		{
			name: "boolean key", role: RoleGateway, get: func(c *Config) any { return c.Cache.Enabled }, def: true,
			file: layer{file: "cache: {enabled: false}"}, fileV: false,
			env: layer{env: "REQGATE_CACHE_ENABLED=true"}, envV: true,
			flag: layer{flag: []string{"--set", "cache.enabled=false"}}, flagV: false,
		},
		{
			name: "list key", role: RoleGateway, get: func(c *Config) any { return c.CORS.AllowedOrigins }, def: []string(nil),
			file: layer{file: "cors:\n  allowed_origins:\n    - https://a.example\n    - https://b.example"}, fileV: []string{"https://a.example", "https://b.example"},
			env: layer{env: "REQGATE_CORS_ALLOWED_ORIGINS=https://c.example"}, envV: []string{"https://c.example"},
			flag: layer{flag: []string{"--set", "cors.allowed_origins=*,http://localhost:3000"}}, flagV: []string{"*", "http://localhost:3000"},
		},
		{
			name: "number key", role: RoleServe, get: func(c *Config) any { return c.Tracing.SampleRatio }, def: 1.0,
			file: layer{file: "tracing: {sample_ratio: 0.25}"}, fileV: 0.25,
			env: layer{env: "REQGATE_TRACING_SAMPLE_RATIO=0"}, envV: 0.0,
			flag: layer{flag: []string{"--set", "tracing.sample_ratio=0.01"}}, flagV: 0.01,
		},
	}
	for _, k := range kinds {
		cfg := writeFile(t, "reqgate.yaml", k.file.file+"\n")
		steps := []struct {
			name    string
			args    []string
			environ []string
			want    any
		}{
			{"default", nil, nil, k.def},
			{"file beats default", []string{"--config", cfg}, nil, k.fileV},
			{"file named by REQGATE_CONFIG", nil, []string{"REQGATE_CONFIG=" + cfg}, k.fileV},
			{"env beats file", []string{"--config", cfg}, []string{k.env.env}, k.envV},
			{"flag beats env and file", append([]string{"--config", cfg}, k.flag.flag...), []string{k.env.env}, k.flagV},
			{"flag beats default", k.flag.flag, nil, k.flagV},
		}
		for _, s := range steps {
			t.Run(k.name+"/"+s.name, func(t *testing.T) {
				c := mustLoad(t, k.role, s.args, s.environ)
				if got, want := k.get(c), s.want; !reflect.DeepEqual(got, want) {
					t.Fatalf("got %#v, want %#v", got, want)
				}
			})
		}
	}
}

// TestSources checks that Source names where each value came from.
func TestSources(t *testing.T) {
	cfg := writeFile(t, "r.yaml", "cache:\n  ttl: 5s\n  scope: user\n")
	c := mustLoad(t, RoleGateway, []string{"--config", cfg, "--set", "cache.scope=account", "--upstream", "http://x:1"},
		[]string{"REQGATE_AUTH_TTL=1s"})
	for path, want := range map[string]string{
		"cache.ttl":       cfg + ":2",
		"cache.scope":     "flag --set cache.scope",
		"upstream.url":    "flag --upstream",
		"auth.ttl":        "env REQGATE_AUTH_TTL",
		"cache.max_bytes": "default",
	} {
		if got := c.Source(path); got != want {
			t.Errorf("Source(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestFileKeys reads the contract's example file in full.
func TestFileKeys(t *testing.T) {
	cfg := writeFile(t, "contract.yaml", contractExample)
	c := mustLoad(t, RoleGateway, []string{"--config", cfg}, nil)
	want := Default(RoleGateway)
	want.ConfigFile = cfg
	want.RateLimit.Policies = []Policy{{Name: "account", Key: "api_key", Limit: 25, Period: 10 * time.Second, Burst: 25, Algorithm: "gcra"}}
	want.RateLimit.Overrides = []Override{{APIKey: "acme-7f3a", Policy: "account", Limit: 1000, Period: time.Second, Burst: 1000}}
	want.CORS.AllowedOrigins = []string{"https://app.example.com"}
	c.sources, want.sources = nil, nil
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
}

// contractExample is a config file with the keys of docs/operations.md (Configuration).
const contractExample = `upstream:
  url: http://127.0.0.1:8081      # same as --upstream
  timeout: 30s                     # whole upstream exchange
  max_idle_conns: 512
cache:
  enabled: true
  max_bytes: 256MiB                # memory budget of the response cache: the heap it holds
  ttl: 30s                         # freshness of a cached GET
  stale_if_error: 5m               # how long a stale entry may stand in when the upstream fails
  scope: account                   # account: entries shared by the verified users of one api_key; user: per user
auth:
  ttl: 60s                         # how long a verified credential is trusted without asking the core
ratelimit:
  reject_status: 429               # 429, or 503 for strict compatibility with existing XML clients
  on_redis_error: local            # local (per-replica limiter) | allow | deny
  policies:                        # every policy that matches must admit a request
    - name: account
      key: api_key                 # api_key | user | ip
      limit: 25                    # requests ...
      period: 10s                  # ... per period
      burst: 25                    # how many may arrive at once; default: limit
      max_delay: 0s                # shaping: hold a request up to this long for its slot instead of rejecting
  overrides:
    - api_key: acme-7f3a
      policy: account
      limit: 1000
      period: 1s
cors:
  allowed_origins: ["https://app.example.com"]
`

// TestBurstDefaultsToLimit checks the file's default burst for policies and overrides, and that an explicit
// burst stays; and the default algorithm (gcra), and a window policy with its block as written.
func TestBurstDefaultsToLimit(t *testing.T) {
	cfg := writeFile(t, "r.yaml", `ratelimit:
  policies:
    - {name: a, key: ip, limit: 7, period: 1s}
    - {name: b, key: user, limit: 7, period: 1s, burst: 2, max_delay: 250ms}
    - {name: c, key: api_key, limit: 25, period: 10s, algorithm: window, block: 10m}
  overrides:
    - {api_key: k, policy: a, limit: 9, period: 1m}
`)
	c := mustLoad(t, RoleServe, []string{"--config", cfg}, nil)
	got := fmt.Sprint(c.RateLimit.Policies, c.RateLimit.Overrides)
	want := fmt.Sprint([]Policy{{"a", "ip", 7, time.Second, 7, 0, "gcra", 0}, {"b", "user", 7, time.Second, 2, 250 * time.Millisecond, "gcra", 0},
		{"c", "api_key", 25, 10 * time.Second, 25, 0, "window", 10 * time.Minute}},
		[]Override{{"k", "a", 9, time.Minute, 9}})
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
