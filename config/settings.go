package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// setting is one scalar (or string-list) key: its path in the file, its flag if the contract gives it one, its
// environment variables, and where it lives in Config. The table drives the file reader, the environment,
// --set, --help and Print alike, so a new key is one line here plus its check in Validate.
type setting struct {
	path   string   // "cache.ttl"
	flag   string   // "listen" for --listen; "" when the key has no flag of its own
	roles  []string // roles that have the flag
	env    []string // REQGATE_* names, canonical first
	secret bool     // Print masks passwords in it
	help   string
	field  func(c *Config) any // pointer to the field: *string, *[]string, *time.Duration, *int, *int64 (a size), *bool, *float64
}

var allRoles = []string{RoleServe, RoleCore, RoleGateway}

// settings in Print order.
var settings = []*setting{
	{path: "listen", flag: "listen", roles: allRoles, help: "`ADDR` of the public HTTP listener",
		field: func(c *Config) any { return &c.Listen }},
	{path: "admin_listen", flag: "admin-listen", roles: allRoles, help: "`ADDR` of /metrics, /healthz, /readyz; \"off\" disables it",
		field: func(c *Config) any { return &c.AdminListen }},
	{path: "db", flag: "db", roles: []string{RoleServe, RoleCore}, secret: true, help: "the store: a SQLite file path or a postgres:// URL (`DSN`)",
		field: func(c *Config) any { return &c.DB }},
	{path: "accounts", flag: "accounts", roles: []string{RoleServe, RoleCore}, help: "account `FILE` applied at start; repeatable (REQGATE_ACCOUNTS: comma-separated)",
		field: func(c *Config) any { return &c.Accounts }},
	{path: "admin.pprof", help: "serve Go's profiler at /debug/pprof/ on the admin listener (not loopback: only with admin.token_file)", field: func(c *Config) any { return &c.Admin.PProf }},
	{path: "admin.token_file", help: "`FILE` holding the bearer token of the admin endpoints but /healthz, /readyz, /metrics; reloaded like the TLS files", field: func(c *Config) any { return &c.Admin.TokenFile }},

	{path: "server.read_timeout", help: "whole request read", field: func(c *Config) any { return &c.Server.ReadTimeout }},
	{path: "server.header_timeout", help: "request head read, from its first byte or the connection's acceptance (late: 408, closed); 0 = read_timeout only", field: func(c *Config) any { return &c.Server.HeaderTimeout }},
	{path: "server.write_timeout", help: "each write of an answer to the client (an answer is one or two writes; a client that does not read it is closed)", field: func(c *Config) any { return &c.Server.WriteTimeout }},
	{path: "server.idle_timeout", help: "idle keep-alive connection", field: func(c *Config) any { return &c.Server.IdleTimeout }},
	{path: "server.shutdown_timeout", help: "grace period on SIGTERM", field: func(c *Config) any { return &c.Server.ShutdownTimeout }},
	{path: "server.max_body_bytes", help: "largest request body", field: func(c *Config) any { return &c.Server.MaxBodyBytes }},
	{path: "server.body_budget", help: "bytes of request bodies held at once, all requests together (503 past it)", field: func(c *Config) any { return &c.Server.BodyBudget }},
	{path: "server.body_share", help: "part of server.body_budget one account, or one client address, may hold at once (at least one body of server.max_body_bytes); 1 = no share of its own", field: func(c *Config) any { return &c.Server.BodyShare }},
	{path: "server.min_upload_rate", help: "bytes per second a request body must arrive at once server.upload_grace has passed (slower: 408, connection closed); 0 = no minimum", field: func(c *Config) any { return &c.Server.MinUploadRate }},
	{path: "server.upload_grace", help: "time a request body may take before server.min_upload_rate applies", field: func(c *Config) any { return &c.Server.UploadGrace }},
	{path: "server.max_conns", help: "open client connections", field: func(c *Config) any { return &c.Server.MaxConns }},
	{path: "server.max_conns_per_ip", help: "open client connections of one client IP (trusted proxies exempt)", field: func(c *Config) any { return &c.Server.MaxConnsPerIP }},
	{path: "server.max_conns_per_prefix", help: "open client connections of one client network, IPv4 /24 or IPv6 /64 (trusted proxies exempt)", field: func(c *Config) any { return &c.Server.MaxConnsPerPrefix }},
	{path: "server.trusted_proxies", help: "networks (CIDR or IP) of proxies whose X-Forwarded-For/-Proto/-Host the gateway (and the core role) believes", field: func(c *Config) any { return &c.Server.TrustedProxies }},
	{path: "server.tls_cert_file", help: "PEM certificate (chain) `FILE` of the gateway's HTTPS listener; with server.tls_key_file", field: func(c *Config) any { return &c.Server.TLSCertFile }},
	{path: "server.tls_key_file", help: "PEM private key `FILE` of the gateway's HTTPS listener; with server.tls_cert_file", field: func(c *Config) any { return &c.Server.TLSKeyFile }},

	{path: "store.password_file", flag: "db-password-file", roles: []string{RoleServe, RoleCore},
		help: "`FILE` holding the password of a postgres:// --db that names none", field: func(c *Config) any { return &c.Store.PasswordFile }},
	{path: "store.connect_timeout", help: "how long an unreachable PostgreSQL store is retried at start; 0 = once",
		field: func(c *Config) any { return &c.Store.ConnectTimeout }},

	{path: "log.level", help: "debug | info | warn | error", field: func(c *Config) any { return &c.Log.Level }},
	{path: "log.format", help: "text | json", field: func(c *Config) any { return &c.Log.Format }},

	{path: "upstream.url", flag: "upstream", roles: []string{RoleGateway}, env: []string{"REQGATE_UPSTREAM"}, secret: true,
		help: "base `URL` of the core (a comma-separated list for several cores)", field: func(c *Config) any { return &c.Upstream.URL }},
	{path: "upstream.timeout", help: "whole upstream exchange", field: func(c *Config) any { return &c.Upstream.Timeout }},
	{path: "upstream.queue_timeout", help: "longest a request waits in the gateway before it is forwarded (longer: 503, never forwarded); 0 = no bound", field: func(c *Config) any { return &c.Upstream.QueueTimeout }},
	{path: "upstream.max_idle_conns", help: "connections per upstream core", field: func(c *Config) any { return &c.Upstream.MaxIdleConns }},
	{path: "upstream.max_conn_wait", help: "wait for a free upstream connection before 503", field: func(c *Config) any { return &c.Upstream.MaxConnWait }},
	{path: pathInflight, help: "requests of one account in flight to the cores at once; more wait up to max_conn_wait, then 503; default a quarter of max_idle_conns (at least 4); 0 = no cap", field: func(c *Config) any { return &c.Upstream.MaxInflightPerAccount }},
	{path: "upstream.max_response_bytes", help: "largest upstream response body", field: func(c *Config) any { return &c.Upstream.MaxResponseBytes }},
	{path: "upstream.verify", help: "proof | probe: trust a credential on the core's proof header, or on a 2xx answer to a GET of upstream.verify_path with it (any implementation of the interface)", field: func(c *Config) any { return &c.Upstream.Verify }},
	{path: "upstream.verify_path", help: "path probe mode GETs with the credential alone, {key} the account's api_key; one the upstream always authenticates", field: func(c *Config) any { return &c.Upstream.VerifyPath }},
	{path: "upstream.host", help: "Host header sent upstream; empty = the host of the first upstream.url", field: func(c *Config) any { return &c.Upstream.Host }},
	{path: "upstream.tls.server_name", help: "name sent as SNI to https upstreams and verified in their certificate; empty = each URL's host", field: func(c *Config) any { return &c.Upstream.TLS.ServerName }},
	{path: "upstream.tls.ca_file", help: "PEM `FILE` of the CAs that sign https upstreams' certificates; empty = the system's roots", field: func(c *Config) any { return &c.Upstream.TLS.CAFile }},
	{path: "upstream.tls.cert_file", help: "PEM `FILE` of the client certificate presented to https upstreams (with upstream.tls.key_file)", field: func(c *Config) any { return &c.Upstream.TLS.CertFile }},
	{path: "upstream.tls.key_file", help: "PEM `FILE` of the key of upstream.tls.cert_file", field: func(c *Config) any { return &c.Upstream.TLS.KeyFile }},
	{path: "upstream.slow_start", help: "a core back after being out reaches its full share of requests over this; 0 = at once", field: func(c *Config) any { return &c.Upstream.SlowStart }},

	{path: "redis.url", flag: "redis", roles: allRoles, env: []string{"REQGATE_REDIS"}, secret: true,
		help: "Redis `URL` for shared rate limits and cache invalidation; a core publishes account changes on it (redis://host:6379/0)", field: func(c *Config) any { return &c.Redis.URL }},
	{path: "redis.password_file", flag: "redis-password-file", roles: allRoles,
		help: "`FILE` holding the password of a redis.url that names none, or of the nodes of redis.sentinel or redis.cluster", field: func(c *Config) any { return &c.Redis.PasswordFile }},
	{path: "redis.sentinel.master", help: "name of the master a Redis Sentinel group watches (with redis.sentinel.addrs, instead of redis.url)",
		field: func(c *Config) any { return &c.Redis.Sentinel.Master }},
	{path: "redis.sentinel.addrs", help: "host:port of each Sentinel of the group; the gateway follows the master they name through failovers",
		field: func(c *Config) any { return &c.Redis.Sentinel.Addrs }},
	{path: "redis.sentinel.password_file", help: "`FILE` holding the password of the Sentinels (asked without one when unset; the nodes' is redis.password_file)",
		field: func(c *Config) any { return &c.Redis.Sentinel.PasswordFile }},
	{path: "redis.cluster.addrs", help: "host:port of some nodes of a Redis Cluster (instead of redis.url); the others are discovered",
		field: func(c *Config) any { return &c.Redis.Cluster.Addrs }},
	{path: "redis.timeout", help: "dial, read and write timeout of the Redis client, each unless redis.url sets it", field: func(c *Config) any { return &c.Redis.Timeout }},
	{path: "redis.namespace", help: "prefix of every Redis key and channel of this deployment (its gateways and core alike), so that deployments sharing one Redis share nothing; empty = none",
		field: func(c *Config) any { return &c.Redis.Namespace }},

	{path: "cache.enabled", help: "cache GET responses", field: func(c *Config) any { return &c.Cache.Enabled }},
	{path: "cache.max_bytes", help: "memory budget of the response cache: the heap its entries and tables hold", field: func(c *Config) any { return &c.Cache.MaxBytes }},
	{path: "cache.ttl", help: "freshness of a cached GET", field: func(c *Config) any { return &c.Cache.TTL }},
	{path: "cache.ttl_by_route", help: "shorter freshness for the reads of some route classes, as class=duration (record=10s, search=5s)", field: func(c *Config) any { return &c.Cache.TTLByRoute }},
	{path: "cache.replica_lease", help: "with Redis: how long a replica serves cached reads after it last proved it heard every invalidation, and the longest a write waits for a replica that does not acknowledge it", field: func(c *Config) any { return &c.Cache.ReplicaLease }},
	{path: "cache.stale_if_error", help: "how long a stale entry may stand in when the upstream fails; 0 = never", field: func(c *Config) any { return &c.Cache.StaleIfError }},
	{path: "cache.scope", help: "account | user", field: func(c *Config) any { return &c.Cache.Scope }},

	{path: "auth.ttl", help: "how long a verified credential is trusted; 0 = never", field: func(c *Config) any { return &c.Auth.TTL }},
	{path: "auth.max_user_failures", help: "failed logins per username from one client IP within failure_window", field: func(c *Config) any { return &c.Auth.MaxUserFailures }},
	{path: "auth.max_user_failures_all_ips", help: "failed logins per username from all IPs together within failure_window", field: func(c *Config) any { return &c.Auth.MaxUserFailuresAllIPs }},
	{path: "auth.max_ip_failures", help: "failed logins per client IP within failure_window", field: func(c *Config) any { return &c.Auth.MaxIPFailures }},
	{path: "auth.failure_window", help: "window of the failed-login counts", field: func(c *Config) any { return &c.Auth.FailureWindow }},
	{path: "auth.known_address_ttl", help: "how long the network (/24, /64) of a verified login exempts its user's logins from max_user_failures_all_ips; 0 = never", field: func(c *Config) any { return &c.Auth.KnownAddressTTL }},
	{path: "auth.max_login_delay", help: "longest wait of a login past max_user_failures_all_ips from a network that is not known; 0 = refused instead", field: func(c *Config) any { return &c.Auth.MaxLoginDelay }},
	{path: "auth.max_delayed_logins", help: "logins waiting at once (max_login_delay), all users together; one more is refused", field: func(c *Config) any { return &c.Auth.MaxDelayedLogins }},

	{path: "core.auth_proof", help: "send the Reqgate-Authenticated proof the gateway's upstream.verify: proof needs; false = answer as another implementation of the interface", field: func(c *Config) any { return &c.Core.AuthProof }},
	{path: "core.schema_ttl", help: "how long account schemas stay in the core's memory; 0 = never", field: func(c *Config) any { return &c.Core.SchemaTTL }},

	{path: "ratelimit.reject_status", help: "429 | 503: the status of a rate-limit or failed-login refusal", field: func(c *Config) any { return &c.RateLimit.RejectStatus }},
	{path: "ratelimit.on_redis_error", help: "local | allow | deny", field: func(c *Config) any { return &c.RateLimit.OnRedisError }},
	{path: "ratelimit.redis_timeout", help: "budget of one Redis round trip on the request path", field: func(c *Config) any { return &c.RateLimit.RedisTimeout }},
	{path: "ratelimit.redis_backoff", help: "time on the fallback before probing Redis again", field: func(c *Config) any { return &c.RateLimit.RedisBackoff }},
	{path: "ratelimit.redis_failures", help: "Redis failures in a row (one stall counting once) that switch to the fallback", field: func(c *Config) any { return &c.RateLimit.RedisFailures }},
	{path: "ratelimit.local_replicas", help: "gateway replicas assumed to share the limits until counted in Redis (local fallback: limit/replicas each)", field: func(c *Config) any { return &c.RateLimit.LocalReplicas }},
	{path: "ratelimit.max_held", help: "shaped requests held at once per policy key", field: func(c *Config) any { return &c.RateLimit.MaxHeld }},

	{path: "cors.allowed_origins", help: "origins allowed to call the gateway from a browser", field: func(c *Config) any { return &c.CORS.AllowedOrigins }},

	{path: "reload.watch", help: "how often the --config file and the account files are checked for changes, reloaded like SIGHUP; 0 = never", field: func(c *Config) any { return &c.Reload.Watch }},
	{path: "tracing.endpoint", help: "OTLP/HTTP `URL` of a trace collector (http://collector:4318); empty = no tracing", field: func(c *Config) any { return &c.Tracing.Endpoint }},
	{path: "tracing.sample_ratio", help: "share of new traces recorded, 0 to 1 (a caller's sampled traceparent is followed)", field: func(c *Config) any { return &c.Tracing.SampleRatio }},
	{path: "tracing.service_name", help: "service.name of the spans; empty = reqgate-<role>", field: func(c *Config) any { return &c.Tracing.ServiceName }},
	{path: "metrics.top_accounts", help: "the busiest accounts given series of their own on /metrics (label account; the others count as account=\"other\"); 0 = none",
		field: func(c *Config) any { return &c.Metrics.TopAccounts }},
}

// Key paths handled outside the settings table (lists of mappings, file only).
const (
	pathPolicies  = "ratelimit.policies"
	pathOverrides = "ratelimit.overrides"
)

// pathInflight is the key whose default follows upstream.max_idle_conns (Config.derive).
const pathInflight = "upstream.max_inflight_per_account"

var (
	settingByPath = map[string]*setting{}
	settingByEnv  = map[string]*setting{}
	sections      = map[string]bool{} // "server", "ratelimit", ...
)

func init() {
	for _, s := range settings {
		canonical := "REQGATE_" + strings.ToUpper(strings.ReplaceAll(s.path, ".", "_"))
		env := []string{canonical}
		if s.flag != "" {
			if fe := envName(s.flag); fe != canonical {
				env = append(env, fe)
			}
		}
		for _, e := range s.env {
			if !contains(env, e) {
				env = append(env, e)
			}
		}
		s.env = env
		settingByPath[s.path] = s
		for _, e := range env {
			settingByEnv[e] = s
		}
		for i := range len(s.path) {
			if s.path[i] == '.' {
				sections[s.path[:i]] = true // "redis" and "redis.sentinel" of "redis.sentinel.master"
			}
		}
	}
}

// envName is the environment variable of a flag: REQGATE_ and the name in upper case, dashes as underscores.
func envName(flag string) string {
	return "REQGATE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kindName names what a setting expects, for messages and --help.
func (s *setting) kindName() string {
	switch s.field(&Config{}).(type) {
	case *time.Duration:
		return "duration"
	case *int:
		return "integer"
	case *int64:
		return "size"
	case *bool:
		return "boolean"
	case *float64:
		return "number"
	case *[]string:
		return "list"
	default:
		return "string"
	}
}

// set parses raw (from a flag, the environment or a file scalar) into the field. A list takes a comma-separated
// value.
func (s *setting) set(c *Config, raw string) error {
	switch p := s.field(c).(type) {
	case *string:
		*p = strings.TrimSpace(raw)
	case *[]string:
		*p = splitList(raw)
	case *time.Duration:
		d, err := parseDuration(raw)
		if err != nil {
			return err
		}
		*p = d
	case *int:
		n, err := parseInt(raw)
		if err != nil {
			return err
		}
		*p = n
	case *int64:
		n, err := parseSize(raw)
		if err != nil {
			return err
		}
		*p = n
	case *bool:
		b, err := parseBool(raw)
		if err != nil {
			return err
		}
		*p = b
	case *float64:
		f, err := parseFloat(raw)
		if err != nil {
			return err
		}
		*p = f
	default:
		return fmt.Errorf("internal: unsupported field type %T", p)
	}
	return nil
}

// format writes the field's value as the file would hold it (lists as comma-separated).
func (s *setting) format(c *Config) string {
	switch p := s.field(c).(type) {
	case *string:
		return *p
	case *[]string:
		return strings.Join(*p, ",")
	case *time.Duration:
		return formatDuration(*p)
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return formatSize(*p)
	case *bool:
		return strconv.FormatBool(*p)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	return ""
}
