package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusals runs every refusal path and checks the exact message line: source, key path and reason. In file
// cases, F stands for the file's path.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name    string
		role    string // default gateway
		file    string // written to F and passed with --config when not empty
		environ []string
		args    []string
		want    []string // lines that must appear in the error
	}{
		// The file: shape and syntax.
		{name: "unknown top-level key", file: "listen: :1\nfoo: 1\n", want: []string{`F:2: foo: unknown key`}},
		{name: "unknown key with suggestion", file: "cache:\n  tll: 5s\n", want: []string{`F:2: cache.tll: unknown key (did you mean "ttl"?)`}},
		{name: "unknown section key", file: "rate_limit:\n  reject_status: 503\n", want: []string{`F:1: rate_limit: unknown key (did you mean "ratelimit"?)`}},
		{name: "unknown policy key", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 1s, brust: 3}\n",
			want: []string{`F:3: ratelimit.policies[0].brust: unknown key (did you mean "burst"?)`}},
		{name: "unknown override key", file: "ratelimit:\n  policies: [{name: a, key: ip, limit: 1, period: 1s}]\n  overrides:\n    - {api_key: k, policy: a, limit: 1, period: 1s, max_delay: 1s}\n",
			want: []string{`F:4: ratelimit.overrides[0].max_delay: unknown key`}},
		{name: "bad duration", file: "cache:\n  ttl: 10\n", want: []string{`F:2: cache.ttl: bad duration "10": want a Go duration such as 250ms, 10s or 5m`}},
		{name: "bad size", file: "cache:\n  max_bytes: 10MB\n", want: []string{`F:2: cache.max_bytes: bad size "10MB": want a whole number of bytes, KiB, MiB, GiB or TiB`}},
		{name: "negative size", file: "server:\n  max_body_bytes: -1\n", want: []string{`F:2: server.max_body_bytes: bad size "-1"`}},
		{name: "bad integer", file: "ratelimit:\n  reject_status: many\n", want: []string{`F:2: ratelimit.reject_status: bad integer "many"`}},
		{name: "bad boolean", file: "cache:\n  enabled: maybe\n", want: []string{`F:2: cache.enabled: bad boolean "maybe": want true or false`}},
		{name: "section not a mapping", file: "cache: 5\n", want: []string{`F:1: cache: must be a mapping of keys`}},
		{name: "scalar given a mapping", file: "cache:\n  ttl: {a: 1}\n", want: []string{`F:2: cache.ttl: must be a duration, not a mapping`}},
		{name: "scalar given nothing", file: "cache:\n  ttl:\n", want: []string{`F:2: cache.ttl: missing value (a duration)`}},
		{name: "list given a mapping", file: "cors:\n  allowed_origins: {a: 1}\n", want: []string{`F:2: cors.allowed_origins: must be a list of strings`}},
		{name: "list of lists", file: "accounts: [[a]]\n", want: []string{`F:1: accounts: must be a list of strings`}},
		{name: "duplicate key", file: "cache:\n  ttl: 1s\n  ttl: 2s\n", want: []string{`F:3: cache.ttl: duplicate key`}},
		{name: "YAML syntax", file: "cache:\n  ttl: [1s\n", want: []string{"F:1: bad YAML: did not find expected ',' or ']'"}},
		{name: "tab indentation", file: "cache:\n\tttl: 1s\n", want: []string{`F:2: bad YAML: found character that cannot start any token`}},
		{name: "two documents", file: "listen: :1\n---\nlisten: :2\n", want: []string{`F:2: a config file holds one YAML document`}},
		{name: "top level a list", file: "- listen\n", want: []string{`F:1: the top level must be a mapping of keys`}},
		{name: "policies not a list", file: "ratelimit:\n  policies: 5\n", want: []string{`F:2: ratelimit.policies: must be a list`}},
		{name: "policy not a mapping", file: "ratelimit:\n  policies: [account]\n", want: []string{`F:2: ratelimit.policies[0]: must be a mapping of keys`}},
		{name: "policy value a list", file: "ratelimit:\n  policies: [{name: [a]}]\n", want: []string{`F:2: ratelimit.policies[0].name: must be a single value`}},
		{name: "policy bad period", file: "ratelimit:\n  policies:\n    - name: a\n      key: ip\n      limit: 1\n      period: 1 second\n",
			want: []string{`F:6: ratelimit.policies[0].period: bad duration "1 second": want a Go duration such as 250ms, 10s or 5m`}},
		{name: "merge key", file: "base: &b {ttl: 1s}\ncache:\n  <<: *b\n", want: []string{`F:1: base: unknown key`, `F:3: cache: merge keys (<<) are not supported`}},
		{name: "missing file", args: []string{"--config", "/nonexistent/reqgate.yaml"},
			want: []string{`/nonexistent/reqgate.yaml: cannot read config file: no such file or directory`}},

		// Policies that can never admit, and bad overrides.
		{name: "policy limit 0", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 0, period: 1s, burst: 1}\n",
			want: []string{`F:3: ratelimit.policies[0].limit: must be >= 1 (and at most 1000000000)`}},
		{name: "policy period 0", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 0s}\n",
			want: []string{`F:3: ratelimit.policies[0].period: must be > 0 (and at most 8784h)`}},
		{name: "policy negative period", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: -1s}\n",
			want: []string{`F:3: ratelimit.policies[0].period: must be > 0 (and at most 8784h)`}},
		{name: "policy burst 0", file: "ratelimit:\n  policies:\n    - name: a\n      key: ip\n      limit: 5\n      period: 1s\n      burst: 0\n",
			want: []string{`F:7: ratelimit.policies[0].burst: must be >= 1 (and at most 1000000000)`}},
		{name: "policy bad key", file: "ratelimit:\n  policies:\n    - {name: a, key: host, limit: 1, period: 1s}\n",
			want: []string{`F:3: ratelimit.policies[0].key: must be one of api_key, user, ip, not "host"`}},
		{name: "policy without key", file: "ratelimit:\n  policies:\n    - {name: a, limit: 1, period: 1s}\n",
			want: []string{`F:3: ratelimit.policies[0].key: required: api_key, user or ip`}},
		{name: "policy without anything", file: "ratelimit:\n  policies:\n    - {}\n",
			want: []string{`F:3: ratelimit.policies[0].name: required`, `F:3: ratelimit.policies[0].limit: must be >= 1 (and at most 1000000000)`,
				`F:3: ratelimit.policies[0].period: must be > 0 (and at most 8784h)`, `F:3: ratelimit.policies[0].burst: must be >= 1 (and at most 1000000000)`}},
		{name: "policy bad name", file: "ratelimit:\n  policies:\n    - {name: 'a b', key: ip, limit: 1, period: 1s}\n",
			want: []string{`F:3: ratelimit.policies[0].name: "a b": use letters, digits, '-', '_' or '.' (it is sent in the RateLimit-Policy header)`}},
		{name: "policy duplicate name", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 1s}\n    - {name: a, key: user, limit: 1, period: 1s}\n",
			want: []string{`F:4: ratelimit.policies[1].name: duplicate policy name "a"`}},
		{name: "policy negative max_delay", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 1s, max_delay: -1s}\n",
			want: []string{`F:3: ratelimit.policies[0].max_delay: must be between 0s and 1h`}},
		{name: "policy unknown algorithm", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 1s, algorithm: sliding}\n",
			want: []string{`F:3: ratelimit.policies[0].algorithm: must be one of gcra, window, not "sliding"`}},
		{name: "policy block on gcra", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 1s, block: 10m}\n",
			want: []string{`F:3: ratelimit.policies[0].block: applies to algorithm window only`}},
		{name: "policy negative block", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 1s, algorithm: window, block: -1s}\n",
			want: []string{`F:3: ratelimit.policies[0].block: must be between 0s and 8784h`}},
		{name: "window policy with burst, max_delay, a large limit", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 20000, period: 1s, burst: 5, max_delay: 1s, algorithm: window}\n",
			want: []string{`F:3: ratelimit.policies[0].burst: applies to algorithm gcra only: a window policy admits its limit in any period`,
				`F:3: ratelimit.policies[0].max_delay: applies to algorithm gcra only: a window policy never holds a request`,
				`F:3: ratelimit.policies[0].limit: at most 10000 for algorithm window (it keeps the time of each request of its period)`}},
		{name: "window policy period under 1ms", file: "ratelimit:\n  policies:\n    - {name: a, key: ip, limit: 1, period: 100us, algorithm: window}\n",
			want: []string{`F:3: ratelimit.policies[0].period: at least 1ms for algorithm window`}},
		{name: "override of a window policy with burst", file: "ratelimit:\n  policies: [{name: a, key: api_key, limit: 25, period: 10s, algorithm: window, block: 10m}]\n  overrides:\n    - {api_key: k, policy: a, limit: 50, period: 10s, burst: 60}\n",
			want: []string{`F:4: ratelimit.overrides[0].burst: applies to algorithm gcra only: a window policy admits its limit in any period`}},
		{name: "override of unknown policy", file: "ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 25, period: 10s}\n  overrides:\n    - {api_key: acme, policy: acount, limit: 1, period: 1s}\n",
			want: []string{`F:5: ratelimit.overrides[0].policy: unknown policy "acount"`}},
		{name: "override without policies", file: "ratelimit:\n  overrides:\n    - {api_key: acme, policy: account, limit: 1, period: 1s}\n",
			want: []string{`F:3: ratelimit.overrides[0].policy: unknown policy "account"`}},
		{name: "override bad rate", file: "ratelimit:\n  policies: [{name: a, key: ip, limit: 1, period: 1s}]\n  overrides:\n    - {api_key: k, policy: a, limit: 0, period: 0s, burst: 0}\n",
			want: []string{`F:4: ratelimit.overrides[0].limit: must be >= 1 (and at most 1000000000)`, `F:4: ratelimit.overrides[0].period: must be > 0 (and at most 8784h)`,
				`F:4: ratelimit.overrides[0].burst: must be >= 1 (and at most 1000000000)`}},
		{name: "override bad api_key", file: "ratelimit:\n  policies: [{name: a, key: ip, limit: 1, period: 1s}]\n  overrides:\n    - {api_key: 'a/b', policy: a, limit: 1, period: 1s}\n    - {policy: a, limit: 1, period: 1s}\n",
			want: []string{`F:4: ratelimit.overrides[0].api_key: "a/b": an api_key has only letters, digits, '-' and '_'`, `F:5: ratelimit.overrides[1].api_key: required`}},
		{name: "override duplicate", file: "ratelimit:\n  policies: [{name: a, key: ip, limit: 1, period: 1s}]\n  overrides:\n    - {api_key: k, policy: a, limit: 1, period: 1s}\n    - {api_key: k, policy: a, limit: 2, period: 1s}\n",
			want: []string{`F:5: ratelimit.overrides[1]: duplicate override of policy "a" for api_key "k"`}},

		// Enumerations and numbers.
		{name: "reject_status", file: "ratelimit:\n  reject_status: 500\n", want: []string{`F:2: ratelimit.reject_status: must be 429 or 503, not 500`}},
		{name: "on_redis_error", file: "ratelimit:\n  on_redis_error: retry\n", want: []string{`F:2: ratelimit.on_redis_error: must be one of local, allow, deny, not "retry"`}},
		{name: "cache scope", file: "cache:\n  scope: global\n", want: []string{`F:2: cache.scope: must be one of account, user, not "global"`}},
		{name: "log level", file: "log: {level: verbose}\n", want: []string{`F:1: log.level: must be one of debug, info, warn, error, not "verbose"`}},
		{name: "log format", file: "log: {format: xml}\n", want: []string{`F:1: log.format: must be one of text, json, not "xml"`}},
		{name: "negative timeout", file: "server:\n  read_timeout: -1s\n", want: []string{`F:2: server.read_timeout: must not be negative`}},
		{name: "zero body", file: "server:\n  max_body_bytes: 0\n", want: []string{`F:2: server.max_body_bytes: must be between 1 and 1GiB`}},
		{name: "zero upstream timeout", file: "upstream:\n  timeout: 0s\n", want: []string{`F:2: upstream.timeout: must be > 0`}},
		{name: "negative queue timeout", file: "upstream:\n  queue_timeout: -1s\n", want: []string{`F:2: upstream.queue_timeout: must not be negative`}},
		{name: "upstream verify", file: "upstream:\n  verify: trust\n", want: []string{`F:2: upstream.verify: must be one of proof, probe, not "trust"`}},
		{name: "verify path without key", file: "upstream:\n  verify_path: /api2/demo/re/field\n",
			want: []string{`F:2: upstream.verify_path: "/api2/demo/re/field": want an absolute path naming the account as {key}, without query or escapes`}},
		{name: "verify path with query", file: "upstream:\n  verify_path: '/api2/{key}/re/field?x=1'\n",
			want: []string{`F:2: upstream.verify_path: "/api2/{key}/re/field?x=1": want an absolute path naming the account as {key}, without query or escapes`}},
		{name: "upstream tls without https", file: "upstream:\n  tls: {ca_file: /nonexistent/ca.pem}\n",
			want: []string{`F:2: upstream.tls.ca_file: set, but no upstream.url is https://`, `F:2: upstream.tls.ca_file: open /nonexistent/ca.pem: no such file or directory`}},
		{name: "upstream tls half a client pair", file: "upstream:\n  url: https://api.example\n  tls:\n    cert_file: /nonexistent/c.pem\n",
			want: []string{`upstream.tls.key_file: must be set with upstream.tls.cert_file`}},
		{name: "upstream tls CA file without certificates", file: "upstream:\n  url: https://api.example\n  tls:\n    ca_file: /dev/null\n",
			want: []string{`F:4: upstream.tls.ca_file: /dev/null: no PEM certificate in it`}},
		{name: "upstream host", file: "upstream:\n  host: 'a b'\n", want: []string{`F:2: upstream.host: "a b": want a host name, with an optional :port`}},
		{name: "upstream host with a user", file: "upstream:\n  host: 'me@api.example'\n", want: []string{`F:2: upstream.host: "me@api.example": want a host name, with an optional :port`}},
		{name: "upstream host with an impossible port", file: "upstream:\n  host: 'api.example:99999'\n", want: []string{`F:2: upstream.host: "api.example:99999": want a host name, with an optional :port`}},
		{name: "ttl by route unknown class", file: "cache:\n  ttl_by_route: [records=10s]\n",
			want: []string{`F:2: cache.ttl_by_route: "records=10s": unknown route class "records"`}},
		{name: "ttl by route above cache.ttl", file: "cache:\n  ttl: 30s\n  ttl_by_route: [record=10s, search=1m]\n",
			want: []string{`F:3: cache.ttl_by_route: "search=1m": longer than cache.ttl (30s), the longest an entry is kept`}},
		{name: "ttl by route bad item", file: "cache:\n  ttl_by_route: [record, search=0s]\n",
			want: []string{`F:2: cache.ttl_by_route: "record": want class=duration, e.g. record=10s`}},
		{name: "ttl by route twice", file: "cache:\n  ttl_by_route: [record=1s, record=2s]\n",
			want: []string{`F:2: cache.ttl_by_route: "record=2s": route class record named twice`}},
		{name: "zero idle conns", file: "upstream:\n  max_idle_conns: 0\n", want: []string{`F:2: upstream.max_idle_conns: must be between 1 and 1000000`}},
		{name: "zero redis timeouts", file: "redis:\n  timeout: 0s\nratelimit:\n  redis_timeout: 0s\n  max_held: -1\n",
			want: []string{`F:2: redis.timeout: must be > 0`, `F:4: ratelimit.redis_timeout: must be > 0`, `F:5: ratelimit.max_held: must not be negative`}},
		{name: "upstream connection limits", file: "upstream:\n  max_conn_wait: 0s\n  max_response_bytes: 0\n",
			want: []string{`F:2: upstream.max_conn_wait: must be > 0`, `F:3: upstream.max_response_bytes: must be > 0`}},
		{name: "auth failure limits", file: "auth:\n  max_user_failures: 0\n  max_ip_failures: -1\n  failure_window: 0s\ncore:\n  schema_ttl: -1s\n",
			want: []string{`F:2: auth.max_user_failures: must be >= 1`, `F:3: auth.max_ip_failures: must be >= 1`, `F:4: auth.failure_window: must be > 0`,
				`F:6: core.schema_ttl: must not be negative`}},
		{name: "connection and body limits", file: "server:\n  body_budget: 1KiB\n  max_conns: 10\n  max_conns_per_ip: 11\nauth:\n  max_user_failures_all_ips: 5\n",
			want: []string{`F:2: server.body_budget: must be >= server.max_body_bytes (1048576)`,
				`F:4: server.max_conns_per_ip: must be between 1 and server.max_conns (10)`,
				`F:6: auth.max_user_failures_all_ips: must be >= auth.max_user_failures (10)`}},
		{name: "body share and upload rate", file: "server:\n  body_share: 1.5\n  min_upload_rate: 1KiB\n  upload_grace: 0s\n",
			want: []string{`F:2: server.body_share: must be > 0 and <= 1`, `F:4: server.upload_grace: must be > 0`}},
		{name: "no body share", file: "server:\n  body_share: 0\n  min_upload_rate: -1\n",
			want: []string{`F:3: server.min_upload_rate: bad size "-1": want a whole number of bytes, KiB, MiB, GiB or TiB`, `F:2: server.body_share: must be > 0 and <= 1`}},
		{name: "per-network connection cap below the per-address one", file: "server:\n  max_conns_per_ip: 300\n  max_conns_per_prefix: 200\n  header_timeout: -1s\n",
			want: []string{`F:3: server.max_conns_per_prefix: must be >= server.max_conns_per_ip (300)`,
				`F:4: server.header_timeout: must not be negative`}},
		{name: "negative reload watch", file: "reload:\n  watch: -1s\n", want: []string{`F:2: reload.watch: must not be negative`}},
		{name: "null origin", file: "cors:\n  allowed_origins: [\"null\"]\n",
			want: []string{`F:2: cors.allowed_origins: bad origin "null": want scheme://host[:port] (no path) or *`}},
		{name: "fallback sizing", environ: []string{"REQGATE_RATELIMIT_LOCAL_REPLICAS=0", "REQGATE_RATELIMIT_REDIS_BACKOFF=0s"},
			want: []string{`env REQGATE_RATELIMIT_LOCAL_REPLICAS: ratelimit.local_replicas: must be between 1 and 10000`,
				`env REQGATE_RATELIMIT_REDIS_BACKOFF: ratelimit.redis_backoff: must be > 0`}},
		{name: "enabled cache without room", file: "cache:\n  max_bytes: 0\n  ttl: 0s\n",
			want: []string{`F:2: cache.max_bytes: must be > 0 while the cache is enabled`, `F:3: cache.ttl: must be > 0`}},
		{name: "negative stale", file: "cache:\n  stale_if_error: -5m\nauth:\n  ttl: -1s\n",
			want: []string{`F:2: cache.stale_if_error: must not be negative`, `F:4: auth.ttl: must not be negative`}},

		// Addresses and URLs.
		{name: "listen without port", file: "listen: localhost\n", want: []string{`F:1: listen: bad listen address "localhost": want host:port, e.g. 127.0.0.1:8080 or :8080`}},
		{name: "listen bad port", args: []string{"--listen", "127.0.0.1:70000"},
			want: []string{`flag --listen: listen: bad listen address "127.0.0.1:70000": port must be a number from 0 to 65535`}},
		{name: "listen bad host", environ: []string{"REQGATE_LISTEN=bad host!:80"},
			want: []string{`env REQGATE_LISTEN: listen: bad listen address "bad host!:80": bad host "bad host!"`}},
		{name: "admin bad", args: []string{"--admin-listen", "no"}, want: []string{`flag --admin-listen: admin_listen: bad listen address "no"`}},
		{name: "admin same as listen", args: []string{"--listen", ":8080", "--admin-listen", ":8080"},
			want: []string{`flag --admin-listen: admin_listen: same port as listen (:8080); use another port or "off"`}},
		{name: "admin on the listen port of every interface", file: "listen: :9090\n", want: []string{`admin_listen: same port as listen (:9090); use another port or "off"`}},
		{name: "db unsupported", role: RoleCore, args: []string{"--db", "mysql://u:secret@h/db"},
			want: []string{`flag --db: db: unsupported store "mysql://u:xxxxx@h/db": want a SQLite file path or a postgres:// URL`}},
		{name: "db empty", role: RoleCore, args: []string{"--db", ""}, want: []string{`flag --db: db: required: a SQLite file path or a postgres:// URL`}},
		{name: "db bad postgres URL", role: RoleCore, args: []string{"--db", "postgres://u:p@h:port/db"}, want: []string{`flag --db: db: bad postgres URL: invalid port ":port" after host`}},
		{name: "accounts empty name", role: RoleServe, args: []string{"--accounts", "a.yaml", "--accounts", ""},
			want: []string{`flag --accounts: accounts: entry 1: bad file name ""`}},
		{name: "upstream scheme", args: []string{"--upstream", "ftp://core:21"}, want: []string{`flag --upstream: upstream.url: bad URL "ftp://core:21": scheme must be http or https`}},
		{name: "upstream without host", args: []string{"--upstream", "http://"}, want: []string{`flag --upstream: upstream.url: bad URL "http://": no host`}},
		{name: "upstream with query", args: []string{"--upstream", "http://core:8081/?a=1"}, want: []string{`flag --upstream: upstream.url: bad URL "http://core:8081/?a=1": a base URL has no query or fragment`}},
		{name: "upstream bare host", environ: []string{"REQGATE_UPSTREAM=core:8081"}, want: []string{`env REQGATE_UPSTREAM: upstream.url: bad URL "core:8081": scheme must be http or https`}},
		{name: "upstream twice", args: []string{"--upstream", "http://a:1,http://a:1"}, want: []string{`flag --upstream: upstream.url: "http://a:1" listed twice`}},
		{name: "upstream empty", file: "upstream:\n  url: ''\n", want: []string{`F:2: upstream.url: required: the base URL of the core, e.g. http://127.0.0.1:8081`}},
		{name: "upstream bad port", args: []string{"--upstream", "http://a:0"}, want: []string{`flag --upstream: upstream.url: bad URL "http://a:0": bad port`}},
		{name: "redis scheme", args: []string{"--redis", "http://r:6379"}, want: []string{`flag --redis: redis.url: bad URL "http://r:6379": scheme must be redis, rediss or unix`}},
		{name: "redis db", args: []string{"--redis", "redis://:pw@r:6379/zero"}, want: []string{`flag --redis: redis.url: bad URL "redis://:xxxxx@r:6379/zero": the path must be a database number such as /0`}},
		{name: "redis no host", args: []string{"--redis", "redis:///0"}, want: []string{`flag --redis: redis.url: bad URL "redis:///0": no host`}},
		{name: "redis bad URL keeps the password", args: []string{"--redis", "redis://:se%zzcret@r:6379"}, want: []string{`flag --redis: redis.url: bad URL: invalid URL escape "%zz"`}},
		{name: "redis unix without path", args: []string{"--redis", "unix://"}, want: []string{`flag --redis: redis.url: bad URL "unix://": no socket path`}},
		{name: "redis url and sentinel", file: "redis:\n  url: redis://r:6379/0\n  sentinel:\n    master: m\n    addrs: [s1:26379]\n",
			want: []string{`F:5: redis.sentinel.addrs: set with redis.url: name the Redis one way (redis.url, redis.sentinel or redis.cluster)`}},
		{name: "redis sentinel and cluster", file: "redis:\n  sentinel: {master: m, addrs: [s1:26379]}\n  cluster:\n    addrs: [c1:6379]\n",
			want: []string{`F:4: redis.cluster.addrs: set with redis.sentinel.addrs: name the Redis one way (redis.url, redis.sentinel or redis.cluster)`}},
		{name: "redis sentinel without master", file: "redis:\n  sentinel:\n    addrs: [s1:26379]\n",
			want: []string{`redis.sentinel.master: needs the name of the master the Sentinels watch`}},
		{name: "redis sentinel master without addrs", file: "redis:\n  sentinel:\n    master: m\n",
			want: []string{`F:3: redis.sentinel.master: needs redis.sentinel.addrs`}},
		{name: "redis sentinel bad address", file: "redis:\n  sentinel:\n    master: m\n    addrs: [s1]\n",
			want: []string{`F:4: redis.sentinel.addrs: "s1": want host:port`}},
		{name: "redis cluster bad port", environ: []string{"REQGATE_REDIS_CLUSTER_ADDRS=c1:6379,c2:0"},
			want: []string{`env REQGATE_REDIS_CLUSTER_ADDRS: redis.cluster.addrs: "c2:0": want host:port`}},
		{name: "redis sentinel password without sentinel", file: "redis:\n  sentinel:\n    password_file: /nonexistent\n",
			want: []string{`F:3: redis.sentinel.password_file: needs redis.sentinel.addrs`}},
		{name: "redis unknown sentinel key", file: "redis:\n  sentinel:\n    mastr: m\n",
			want: []string{`F:3: redis.sentinel.mastr: unknown key (did you mean "master"?)`}},
		{name: "redis namespace with a space", file: "redis:\n  namespace: 'team a'\n",
			want: []string{`F:2: redis.namespace: "team a": only letters, digits, '-', '_' and '.'`}},
		{name: "redis namespace with the separator", role: RoleCore, args: []string{"--set", "redis.namespace=a:b"},
			want: []string{`flag --set redis.namespace: redis.namespace: "a:b": only letters, digits, '-', '_' and '.'`}},
		{name: "redis namespace with a pattern", role: RoleServe, environ: []string{"REQGATE_REDIS_NAMESPACE=team*"},
			want: []string{`env REQGATE_REDIS_NAMESPACE: redis.namespace: "team*": only letters, digits, '-', '_' and '.'`}},
		{name: "redis namespace not ASCII", file: "redis:\n  namespace: \"t\\u00e9am\\tx\"\n",
			want: []string{`F:2: redis.namespace: "téam\tx": only letters, digits, '-', '_' and '.'`}},
		{name: "redis namespace too long", args: []string{"--set", "redis.namespace=" + strings.Repeat("n", 65)},
			want: []string{`flag --set redis.namespace: redis.namespace: "` + strings.Repeat("n", 65) + `": 65 characters: at most 64`}},
		{name: "cors origin with path", file: "cors:\n  allowed_origins: ['https://app.example.com/']\n",
			want: []string{`F:2: cors.allowed_origins: bad origin "https://app.example.com/": want scheme://host[:port] (no path) or *`}},
		{name: "tracing endpoint scheme", file: "tracing:\n  endpoint: grpc://collector:4317\n",
			want: []string{`F:2: tracing.endpoint: bad URL "grpc://collector:4317": scheme must be http or https`}},
		{name: "tracing endpoint without host", args: []string{"--set", "tracing.endpoint=http://:4318"},
			want: []string{`flag --set tracing.endpoint: tracing.endpoint: bad URL "http://:4318": no host or a bad port`}},
		{name: "top accounts beyond the bound", file: "metrics:\n  top_accounts: 1001\n", want: []string{`F:2: metrics.top_accounts: must be between 0 and 1000`}},
		{name: "tracing ratio above 1", file: "tracing:\n  sample_ratio: 1.5\n", want: []string{`F:2: tracing.sample_ratio: must be between 0 and 1`}},
		{name: "tracing ratio NaN", environ: []string{"REQGATE_TRACING_SAMPLE_RATIO=NaN"},
			want: []string{`env REQGATE_TRACING_SAMPLE_RATIO: tracing.sample_ratio: must be between 0 and 1`}},
		{name: "tracing ratio not a number", file: "tracing:\n  sample_ratio: half\n", want: []string{`F:2: tracing.sample_ratio: bad number "half"`}},

		// The environment.
		{name: "env bad duration", environ: []string{"REQGATE_CACHE_TTL=soon"}, want: []string{`env REQGATE_CACHE_TTL: cache.ttl: bad duration "soon": want a Go duration such as 250ms, 10s or 5m`}},
		{name: "env bad size", environ: []string{"REQGATE_SERVER_MAX_BODY_BYTES=1PB"}, want: []string{`env REQGATE_SERVER_MAX_BODY_BYTES: server.max_body_bytes: bad size "1PB"`}},
		{name: "env names disagree", environ: []string{"REQGATE_REDIS=redis://a:1", "REQGATE_REDIS_URL=redis://b:1"},
			want: []string{`env REQGATE_REDIS: redis.url: disagrees with REQGATE_REDIS_URL`}},
		{name: "env file missing", environ: []string{"REQGATE_CONFIG=/nonexistent/x.yaml"}, want: []string{`/nonexistent/x.yaml: cannot read config file: no such file or directory`}},

		// Flags.
		{name: "unknown flag", args: []string{"--lisen", ":1"}, want: []string{`flags: flag provided but not defined: -lisen (see --help)`}},
		{name: "flag of another role", role: RoleGateway, args: []string{"--db", "x.db"}, want: []string{`flags: flag provided but not defined: -db (see --help)`}},
		{name: "upstream is not a core flag", role: RoleCore, args: []string{"--upstream", "http://x:1"}, want: []string{`flags: flag provided but not defined: -upstream (see --help)`}},
		{name: "positional argument", args: []string{"--listen", ":1", "extra"}, want: []string{`flags: unexpected argument "extra" (see --help)`}},
		{name: "set without =", args: []string{"--set", "cache.ttl"}, want: []string{`flag --set: "cache.ttl": want key=value, e.g. cache.ttl=10s`}},
		{name: "set unknown key", args: []string{"--set", "cache.tll=1s"}, want: []string{`flag --set cache.tll: cache.tll: unknown key (did you mean "cache.ttl"?)`}},
		{name: "set bad value", args: []string{"--set", "upstream.max_idle_conns=lots"}, want: []string{`flag --set upstream.max_idle_conns: upstream.max_idle_conns: bad integer "lots"`}},
		{name: "set policies", args: []string{"--set", "ratelimit.policies=x"}, want: []string{`flag --set ratelimit.policies: ratelimit.policies: unknown key`}},
		{name: "unknown role", role: "proxy", want: []string{`role: unknown role "proxy": want serve, core or gateway`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			role := tt.role
			if role == "" {
				role = RoleGateway
			}
			args := tt.args
			var path string
			if tt.file != "" {
				path = writeFile(t, "reqgate.yaml", tt.file)
				args = append([]string{"--config", path}, args...)
			}
			c, err := Load(role, args, tt.environ)
			if err == nil {
				t.Fatalf("Load succeeded, want refusal; config: %+v", c)
			}
			if c != nil {
				t.Errorf("Load returned a config with its error")
			}
			lines := strings.Split(err.Error(), "\n")
			for _, w := range tt.want {
				if rest, ok := strings.CutPrefix(w, "F:"); ok {
					w = path + ":" + rest
				}
				found := false
				for _, l := range lines {
					if l == w || strings.HasPrefix(l, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("error lacks %q; got:\n%s", w, err)
				}
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is no *config.Error", err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error shows a password: %s", err)
			}
		})
	}
}

// TestRefusedOnce checks that a value refused while reading is not refused again by Validate.
func TestRefusedOnce(t *testing.T) {
	path := writeFile(t, "r.yaml", "cache:\n  ttl: abc\nratelimit:\n  policies:\n    - {name: a, key: ip, limit: x, period: 1s}\n")
	_, err := Load(RoleServe, []string{"--config", path}, []string{"REQGATE_UPSTREAM_MAX_IDLE_CONNS=x"})
	if err == nil {
		t.Fatal("Load succeeded")
	}
	got := strings.Split(err.Error(), "\n")
	want := []string{
		path + `:2: cache.ttl: bad duration "abc": want a Go duration such as 250ms, 10s or 5m`,
		path + `:5: ratelimit.policies[0].limit: bad integer "x"`,
		`env REQGATE_UPSTREAM_MAX_IDLE_CONNS: upstream.max_idle_conns: bad integer "x"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"--listen", ":1", "-help"}} {
		if _, err := Load(RoleServe, args, nil); !errors.Is(err, ErrHelp) {
			t.Errorf("Load(%q) = %v, want ErrHelp", args, err)
		}
	}
}

func TestFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	big := "# " + strings.Repeat("x", maxFileBytes) + "\n"
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	err := CheckFile(path)
	if got, want := errString(err), path+": config file larger than 1048576 bytes"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
