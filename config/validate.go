package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reqgate/reqgate/internal/redisns"
	"github.com/reqgate/reqgate/internal/wire"
)

// Bounds that keep a policy's arithmetic far from overflow.
const (
	maxLimit    = 1_000_000_000
	maxPeriod   = 366 * 24 * time.Hour
	maxMaxDelay = time.Hour
	maxBodyCap  = 1 << 30
)

// Algorithms of a rate policy.
const (
	AlgorithmGCRA   = "gcra"
	AlgorithmWindow = "window"
)

// A window policy keeps the time of each request it admitted within its period (per key, in Redis or in
// process), so its limit is bounded more tightly than GCRA's; its times are counted to the millisecond at least.
const (
	maxWindowLimit  = 10_000
	minWindowPeriod = time.Millisecond
)

// checker collects the refusals of Validate, each with the source of its key.
type checker struct {
	c    *Config
	errs []error
}

func (k *checker) fail(path, format string, args ...any) {
	if k.c.bad[path] {
		return // already refused while reading, with a better message
	}
	k.errs = append(k.errs, &Error{Source: k.c.sourceOf(path), Path: path, Reason: fmt.Sprintf(format, args...)})
}

// Validate checks every setting and returns all refusals joined (each an *Error naming the key path, the reason
// and where the value came from), or nil.
func (c *Config) Validate() error {
	k := &checker{c: c}
	switch c.Role {
	case RoleServe, RoleCore, RoleGateway:
	default:
		k.errs = append(k.errs, &Error{Path: "role", Reason: fmt.Sprintf("unknown role %q: want serve, core or gateway", c.Role)})
	}
	k.listeners()
	k.db(c.DB)
	for i, a := range c.Accounts {
		if strings.TrimSpace(a) == "" || strings.ContainsRune(a, 0) {
			k.fail("accounts", "entry %d: bad file name %q", i, a)
		}
	}
	k.server()
	k.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	k.oneOf("log.format", c.Log.Format, "text", "json")
	k.upstreamLimits()
	k.redis(c.Redis.URL)
	k.redisNodes(c.Redis)
	k.positive("redis.timeout", c.Redis.Timeout)
	if err := redisns.Check(c.Redis.Namespace); err != nil {
		k.fail("redis.namespace", "%q: %v", c.Redis.Namespace, err)
	}
	k.cache()
	k.auth()
	k.nonNegative("core.schema_ttl", c.Core.SchemaTTL)
	k.nonNegative("reload.watch", c.Reload.Watch)
	k.rateLimit()
	k.origins(c.CORS.AllowedOrigins)
	k.tracing(c.Tracing)
	if n := c.Metrics.TopAccounts; n < 0 || n > 1000 {
		k.fail("metrics.top_accounts", "must be between 0 and 1000")
	}
	k.secrets()
	return errors.Join(k.errs...)
}

func (k *checker) listeners() {
	c := k.c
	k.listen("listen", c.Listen)
	if c.AdminListen != Off {
		k.listen("admin_listen", c.AdminListen)
		if sameListener(c.AdminListen, c.Listen) {
			k.fail("admin_listen", "same port as listen (%s); use another port or \"off\"", c.Listen)
		}
	}
}

func (k *checker) server() {
	s := k.c.Server
	k.nonNegative("server.read_timeout", s.ReadTimeout)
	k.nonNegative("server.header_timeout", s.HeaderTimeout)
	k.nonNegative("server.write_timeout", s.WriteTimeout)
	k.nonNegative("server.idle_timeout", s.IdleTimeout)
	k.nonNegative("server.shutdown_timeout", s.ShutdownTimeout)
	k.nonNegative("store.connect_timeout", k.c.Store.ConnectTimeout)
	if s.MaxBodyBytes < 1 || s.MaxBodyBytes > maxBodyCap {
		k.fail("server.max_body_bytes", "must be between 1 and 1GiB")
	}
	if s.BodyBudget < s.MaxBodyBytes {
		k.fail("server.body_budget", "must be >= server.max_body_bytes (%d)", s.MaxBodyBytes)
	}
	if !(s.BodyShare > 0 && s.BodyShare <= 1) { // NaN fails both comparisons
		k.fail("server.body_share", "must be > 0 and <= 1")
	}
	k.nonNegativeSize("server.min_upload_rate", s.MinUploadRate)
	if s.MinUploadRate > 0 {
		k.positive("server.upload_grace", s.UploadGrace)
	} else {
		k.nonNegative("server.upload_grace", s.UploadGrace)
	}
	if s.MaxConns < 1 {
		k.fail("server.max_conns", "must be >= 1")
	}
	if s.MaxConnsPerIP < 1 || s.MaxConnsPerIP > s.MaxConns {
		k.fail("server.max_conns_per_ip", "must be between 1 and server.max_conns (%d)", s.MaxConns)
	}
	if s.MaxConnsPerPrefix < max(1, s.MaxConnsPerIP) {
		// A network's cap below its addresses' would make the per-address cap a number that never counts.
		k.fail("server.max_conns_per_prefix", "must be >= server.max_conns_per_ip (%d)", s.MaxConnsPerIP)
	}
	k.proxies(s.TrustedProxies)
	k.tls(k.c.Role, s.TLSCertFile, s.TLSKeyFile)
}

func (k *checker) upstreamLimits() {
	u := k.c.Upstream
	k.upstream(u.URL)
	k.positive("upstream.timeout", u.Timeout)
	k.nonNegative("upstream.queue_timeout", u.QueueTimeout)
	if u.MaxIdleConns < 1 || u.MaxIdleConns > 1_000_000 {
		k.fail("upstream.max_idle_conns", "must be between 1 and 1000000")
	}
	k.positive("upstream.max_conn_wait", u.MaxConnWait)
	if u.MaxInflightPerAccount < 0 || u.MaxInflightPerAccount > 1_000_000 {
		k.fail(pathInflight, "must be between 0 (no cap) and 1000000")
	}
	if u.MaxResponseBytes < 1 {
		k.fail("upstream.max_response_bytes", "must be > 0")
	}
	k.nonNegative("upstream.slow_start", u.SlowStart)
	k.oneOf("upstream.verify", u.Verify, VerifyProof, VerifyProbe)
	if p := u.VerifyPath; !strings.HasPrefix(p, "/") || !strings.Contains(p, "{key}") ||
		strings.ContainsAny(p, "?#% \t\r\n\x00") {
		k.fail("upstream.verify_path", "%q: want an absolute path naming the account as {key}, without query or escapes", p)
	}
	k.upstreamTLS()
}

func (k *checker) cache() {
	c := k.c.Cache
	if c.Enabled {
		if c.MaxBytes < 1 {
			k.fail("cache.max_bytes", "must be > 0 while the cache is enabled")
		}
		k.positive("cache.ttl", c.TTL)
	} else {
		k.nonNegativeSize("cache.max_bytes", c.MaxBytes)
		k.nonNegative("cache.ttl", c.TTL)
	}
	if _, err := ParseTTLByRoute(c.TTLByRoute, c.TTL); err != nil {
		k.fail("cache.ttl_by_route", "%v", err)
	}
	k.nonNegative("cache.stale_if_error", c.StaleIfError)
	if c.ReplicaLease < 50*time.Millisecond {
		k.fail("cache.replica_lease", "must be at least 50ms (a replica renews it four times per lease)")
	}
	k.oneOf("cache.scope", c.Scope, "account", "user")
}

func (k *checker) auth() {
	a := k.c.Auth
	k.nonNegative("auth.ttl", a.TTL)
	if a.MaxUserFailures < 1 {
		k.fail("auth.max_user_failures", "must be >= 1")
	}
	if a.MaxIPFailures < 1 {
		k.fail("auth.max_ip_failures", "must be >= 1")
	}
	if a.MaxUserFailuresAllIPs < a.MaxUserFailures {
		k.fail("auth.max_user_failures_all_ips", "must be >= auth.max_user_failures (%d)", a.MaxUserFailures)
	}
	k.positive("auth.failure_window", a.FailureWindow)
	k.nonNegative("auth.known_address_ttl", a.KnownAddressTTL)
	k.nonNegative("auth.max_login_delay", a.MaxLoginDelay)
	if a.MaxDelayedLogins < 0 {
		k.fail("auth.max_delayed_logins", "must be >= 0")
	}
}

func (k *checker) rateLimit() {
	rl := k.c.RateLimit
	if s := rl.RejectStatus; s != 429 && s != 503 {
		k.fail("ratelimit.reject_status", "must be 429 or 503, not %d", s)
	}
	k.oneOf("ratelimit.on_redis_error", rl.OnRedisError, "local", "allow", "deny")
	k.positive("ratelimit.redis_timeout", rl.RedisTimeout)
	k.positive("ratelimit.redis_backoff", rl.RedisBackoff)
	if rl.RedisFailures < 1 || rl.RedisFailures > 1000 {
		k.fail("ratelimit.redis_failures", "must be between 1 and 1000")
	}
	if rl.LocalReplicas < 1 || rl.LocalReplicas > 10000 {
		k.fail("ratelimit.local_replicas", "must be between 1 and 10000")
	}
	if rl.MaxHeld < 0 {
		k.fail("ratelimit.max_held", "must not be negative")
	}
	k.policies(rl.Policies)
	k.overrides(rl.Overrides, rl.Policies)
}

func (k *checker) nonNegative(path string, d time.Duration) {
	if d < 0 {
		k.fail(path, "must not be negative")
	}
}

func (k *checker) nonNegativeSize(path string, n int64) {
	if n < 0 {
		k.fail(path, "must not be negative")
	}
}

func (k *checker) positive(path string, d time.Duration) {
	if d <= 0 {
		k.fail(path, "must be > 0")
	}
}

func (k *checker) oneOf(path, v string, allowed ...string) {
	if !contains(allowed, v) {
		k.fail(path, "must be one of %s, not %q", strings.Join(allowed, ", "), v)
	}
}

// listen checks a host:port listen address; the host may be empty (every interface), an IP or a name.
func (k *checker) listen(path, addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		k.fail(path, "bad listen address %q: want host:port, e.g. 127.0.0.1:8080 or :8080", addr)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		k.fail(path, "bad listen address %q: port must be a number from 0 to 65535", addr)
		return
	}
	if host != "" && net.ParseIP(host) == nil && !validHostname(host) {
		k.fail(path, "bad listen address %q: bad host %q", addr, host)
	}
}

// sameListener reports whether two listen addresses would claim the same port: equal hosts, or a wildcard host
// (every interface) on either side. Port 0 (any free port) never clashes.
func sameListener(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil || pa != pb || pa == "0" {
		return false
	}
	wild := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || wild(ha) || wild(hb)
}

func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if !validLabel(label) {
			return false
		}
	}
	return true
}

// validLabel checks one dot-separated part of a host name (underscores allowed, as some service names have).
func validLabel(label string) bool {
	if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
		return false
	}
	for _, r := range label {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// db checks the store: a postgres:// URL, or else a SQLite file path.
func (k *checker) db(dsn string) {
	switch {
	case dsn == "":
		k.fail("db", "required: a SQLite file path or a postgres:// URL")
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		if _, err := url.Parse(dsn); err != nil {
			k.fail("db", "bad postgres URL: %v", urlReason(err))
		}
	case strings.Contains(dsn, "://"):
		k.fail("db", "unsupported store %q: want a SQLite file path or a postgres:// URL", mask(dsn))
	case strings.ContainsRune(dsn, 0):
		k.fail("db", "bad file path")
	}
}

// urlReason is url.Error's reason without the URL (which may hold a password).
func urlReason(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// upstream checks a comma-separated list of http(s) base URLs.
func (k *checker) upstream(list string) {
	urls := splitList(list)
	if len(urls) == 0 {
		k.fail("upstream.url", "required: the base URL of the core, e.g. http://127.0.0.1:8081")
		return
	}
	seen := map[string]bool{}
	for _, s := range urls {
		u, err := url.Parse(s)
		switch {
		case err != nil:
			k.fail("upstream.url", "bad URL: %v", urlReason(err))
		case u.Scheme != "http" && u.Scheme != "https":
			k.fail("upstream.url", "bad URL %q: scheme must be http or https", mask(s))
		case u.Host == "" || u.Hostname() == "":
			k.fail("upstream.url", "bad URL %q: no host", mask(s))
		case u.RawQuery != "" || u.Fragment != "":
			k.fail("upstream.url", "bad URL %q: a base URL has no query or fragment", mask(s))
		case badPort(u.Port()):
			k.fail("upstream.url", "bad URL %q: bad port", mask(s))
		case seen[s]:
			k.fail("upstream.url", "%q listed twice", mask(s))
		}
		seen[s] = true
	}
}

func badPort(p string) bool {
	if p == "" {
		return false
	}
	n, err := strconv.Atoi(p)
	return err != nil || n < 1 || n > 65535
}

// redis checks a go-redis URL: redis://, rediss:// (TLS) or unix://; empty means no Redis.
func (k *checker) redis(s string) {
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil {
		k.fail("redis.url", "bad URL: %v", urlReason(err))
		return
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Hostname() == "" {
			k.fail("redis.url", "bad URL %q: no host", mask(s))
			return
		}
		if badPort(u.Port()) {
			k.fail("redis.url", "bad URL %q: bad port", mask(s))
			return
		}
		if db := strings.Trim(u.Path, "/"); db != "" {
			if n, err := strconv.Atoi(db); err != nil || n < 0 {
				k.fail("redis.url", "bad URL %q: the path must be a database number such as /0", mask(s))
			}
		}
	case "unix":
		if u.Path == "" {
			k.fail("redis.url", "bad URL %q: no socket path", mask(s))
		}
	default:
		k.fail("redis.url", "bad URL %q: scheme must be redis, rediss or unix", mask(s))
	}
}

// redisNodes checks redis.sentinel and redis.cluster: one way to name the Redis (redis.url, a Sentinel group or
// a cluster), each address host:port, the Sentinel group with its master's name.
func (k *checker) redisNodes(r Redis) {
	var set []string
	if r.URL != "" {
		set = append(set, "redis.url")
	}
	if len(r.Sentinel.Addrs) > 0 {
		set = append(set, "redis.sentinel.addrs")
	}
	if len(r.Cluster.Addrs) > 0 {
		set = append(set, "redis.cluster.addrs")
	}
	if len(set) > 1 {
		k.fail(set[1], "set with %s: name the Redis one way (redis.url, redis.sentinel or redis.cluster)", set[0])
	}
	switch {
	case r.Sentinel.Master != "" && len(r.Sentinel.Addrs) == 0:
		k.fail("redis.sentinel.master", "needs redis.sentinel.addrs")
	case r.Sentinel.Master == "" && len(r.Sentinel.Addrs) > 0:
		k.fail("redis.sentinel.master", "needs the name of the master the Sentinels watch")
	case strings.ContainsFunc(r.Sentinel.Master, func(c rune) bool { return c <= ' ' || c == 0x7f }):
		k.fail("redis.sentinel.master", "%q: no spaces or control characters", r.Sentinel.Master)
	}
	k.hostPorts("redis.sentinel.addrs", r.Sentinel.Addrs)
	k.hostPorts("redis.cluster.addrs", r.Cluster.Addrs)
}

// hostPorts refuses an address that is not host:port.
func (k *checker) hostPorts(path string, addrs []string) {
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" || port == "" || badPort(port) {
			k.fail(path, "%q: want host:port", a)
			return
		}
	}
}

// policies refuses a policy that can never admit a request, and duplicate names.
func (k *checker) policies(ps []Policy) {
	names := map[string]bool{}
	for i, p := range ps {
		at := fmt.Sprintf("%s[%d]", pathPolicies, i)
		switch {
		case p.Name == "":
			k.fail(at+".name", "required")
		case !validToken(p.Name):
			k.fail(at+".name", "%q: use letters, digits, '-', '_' or '.' (it is sent in the RateLimit-Policy header)", p.Name)
		case names[p.Name]:
			k.fail(at+".name", "duplicate policy name %q", p.Name)
		}
		names[p.Name] = true
		if p.Key == "" {
			k.fail(at+".key", "required: api_key, user or ip")
		} else {
			k.oneOf(at+".key", p.Key, "api_key", "user", "ip")
		}
		k.rate(at, p.Limit, p.Period, p.Burst)
		if p.MaxDelay < 0 || p.MaxDelay > maxMaxDelay {
			k.fail(at+".max_delay", "must be between 0s and 1h")
		}
		if p.Algorithm != "" { // a Config built in code may leave it: gcra, as in package ratelimit
			k.oneOf(at+".algorithm", p.Algorithm, AlgorithmGCRA, AlgorithmWindow)
		}
		if p.Block < 0 || p.Block > maxPeriod {
			k.fail(at+".block", "must be between 0s and 8784h")
		}
		switch p.Algorithm {
		case "", AlgorithmGCRA:
			if p.Block != 0 {
				k.fail(at+".block", "applies to algorithm window only")
			}
		case AlgorithmWindow:
			k.window(at, p.Limit, p.Period, p.Burst)
			if p.MaxDelay != 0 {
				k.fail(at+".max_delay", "applies to algorithm gcra only: a window policy never holds a request")
			}
		}
	}
}

// window checks what a window policy, or an override of one, adds to rate: a bounded limit, a period of at least
// a millisecond, no burst of its own.
func (k *checker) window(at string, limit int, period time.Duration, burst int) {
	if limit > maxWindowLimit && limit <= maxLimit {
		k.fail(at+".limit", "at most %d for algorithm window (it keeps the time of each request of its period)",
			maxWindowLimit)
	}
	if period > 0 && period < minWindowPeriod {
		k.fail(at+".period", "at least 1ms for algorithm window")
	}
	if burst != limit && burst >= 1 && burst <= maxLimit {
		k.fail(at+".burst", "applies to algorithm gcra only: a window policy admits its limit in any period")
	}
}

// rate checks limit, period and burst of a policy or an override.
func (k *checker) rate(at string, limit int, period time.Duration, burst int) {
	if limit < 1 || limit > maxLimit {
		k.fail(at+".limit", "must be >= 1 (and at most %d)", maxLimit)
	}
	if period <= 0 || period > maxPeriod {
		k.fail(at+".period", "must be > 0 (and at most 8784h)")
	}
	if burst < 1 || burst > maxLimit {
		k.fail(at+".burst", "must be >= 1 (and at most %d)", maxLimit)
	}
}

func (k *checker) overrides(os []Override, ps []Policy) {
	policies := map[string]bool{}
	windows := map[string]bool{}
	for _, p := range ps {
		policies[p.Name] = true
		windows[p.Name] = p.Algorithm == AlgorithmWindow
	}
	seen := map[[2]string]bool{}
	for i, o := range os {
		at := fmt.Sprintf("%s[%d]", pathOverrides, i)
		switch {
		case o.APIKey == "":
			k.fail(at+".api_key", "required")
		case !wire.ValidAPIKey(o.APIKey):
			k.fail(at+".api_key", "%q: an api_key has only letters, digits, '-' and '_'", o.APIKey)
		}
		switch {
		case o.Policy == "":
			k.fail(at+".policy", "required: the name of a policy")
		case !policies[o.Policy]:
			k.fail(at+".policy", "unknown policy %q", o.Policy)
		case seen[[2]string{o.APIKey, o.Policy}]:
			k.fail(at, "duplicate override of policy %q for api_key %q", o.Policy, o.APIKey)
		}
		seen[[2]string{o.APIKey, o.Policy}] = true
		k.rate(at, o.Limit, o.Period, o.Burst)
		if windows[o.Policy] {
			k.window(at, o.Limit, o.Period, o.Burst)
		}
	}
}

// proxies checks server.trusted_proxies: each a CIDR network or a single IP address.
func (k *checker) proxies(list []string) {
	for _, p := range list {
		if _, err := ParseNetwork(p); err != nil {
			k.fail("server.trusted_proxies", "%v", err)
		}
	}
}

// ParseNetwork reads one entry of server.trusted_proxies: a CIDR network ("10.0.0.0/8") or a single IP
// address ("192.0.2.7", a /32 or /128).
func ParseNetwork(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("bad network %q: want a CIDR such as 10.0.0.0/8 or an IP address", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("bad network %q: want a CIDR such as 10.0.0.0/8 or an IP address", s)
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

// ParseNetworks reads a list of networks as ParseNetwork does: server.trusted_proxies for the gateway and the
// core, which take the parsed networks.
func ParseNetworks(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix // nil for none
	for _, s := range list {
		p, err := ParseNetwork(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// TrustedNetworks is server.trusted_proxies parsed, as the gateway and the core take it (at start and on a
// reload); an error names the key.
func (s Server) TrustedNetworks() ([]netip.Prefix, error) {
	nets, err := ParseNetworks(s.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("server.trusted_proxies: %w", err)
	}
	return nets, nil
}

// origins checks cors.allowed_origins: "*" or scheme://host[:port], as browsers send in Origin.
func (k *checker) origins(list []string) {
	for _, o := range list {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil || badPort(u.Port()) {
			k.fail("cors.allowed_origins", "bad origin %q: want scheme://host[:port] (no path) or *", o)
		}
	}
}

func validToken(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// tracing checks the trace exporter's settings: an http(s) endpoint with a host (or none), a ratio in [0, 1].
func (k *checker) tracing(t Tracing) {
	if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		switch {
		case err != nil:
			k.fail("tracing.endpoint", "bad URL: %v", urlReason(err))
		case u.Scheme != "http" && u.Scheme != "https":
			k.fail("tracing.endpoint", "bad URL %q: scheme must be http or https", mask(t.Endpoint))
		case u.Host == "" || u.Hostname() == "" || badPort(u.Port()):
			k.fail("tracing.endpoint", "bad URL %q: no host or a bad port", mask(t.Endpoint))
		}
	}
	if !(t.SampleRatio >= 0 && t.SampleRatio <= 1) { // NaN fails both comparisons
		k.fail("tracing.sample_ratio", "must be between 0 and 1")
	}
}
