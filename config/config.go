package config

import (
	"strings"
	"time"
)

// Roles of the reqgate binary.
const (
	RoleServe   = "serve"   // core and gateway in one process
	RoleCore    = "core"    // the XML REST service alone
	RoleGateway = "gateway" // the gateway alone, in front of an upstream core
)

// Off is the value of AdminListen that disables the admin listener.
const Off = "off"

// Config is the effective configuration of one process. Default returns a complete value and is the only place
// a default is written; Load fills it from flags, environment and file and validates it. cmd/reqgate hands the
// resolved values to the packages, which default none of them; 0 means "never" or "none" wherever a key allows
// it.
type Config struct {
	Role        string // serve | core | gateway
	Listen      string // public listener; default 127.0.0.1:8080 (core: 127.0.0.1:8081)
	AdminListen string // /metrics, /healthz, /readyz; default 127.0.0.1:9090; "off" disables it
	Admin       Admin
	DB          string   // SQLite file path or postgres:// URL; default ./data/reqgate.db
	Accounts    []string // account files applied at start; default none
	ConfigFile  string   // the --config file read, if any

	Server    Server
	Store     Store
	Log       Log
	Upstream  Upstream
	Redis     Redis
	Cache     Cache
	Auth      Auth
	Core      Core
	RateLimit RateLimit
	CORS      CORS
	Reload    Reload
	Tracing   Tracing
	Metrics   Metrics

	// Warnings are things Load ignored but an operator may want to see (unknown REQGATE_* variables);
	// cmd/reqgate logs them.
	Warnings []string

	sources map[string]string // key path -> where its value came from; nil or missing means default
	bad     map[string]bool   // key paths already refused while reading (Validate stays quiet about them)
}

// Server holds the timeouts and limits of the public listener.
type Server struct {
	ReadTimeout     time.Duration // whole request read; default 30s; 0 = none
	WriteTimeout    time.Duration // each write of an answer; default 30s; 0 = none
	IdleTimeout     time.Duration // keep-alive idle connection; default 60s; 0 = ReadTimeout
	ShutdownTimeout time.Duration // grace period for in-flight requests on SIGTERM; default 15s
	MaxBodyBytes    int64         // largest accepted request body; default 1MiB
	BodyBudget      int64         // bytes of request bodies held at once, all requests together; default 64MiB
	MaxConns        int           // open client connections; default 10000
	MaxConnsPerIP   int           // open client connections of one client IP (trusted proxies exempt); default 256
	// BodyShare is the part of BodyBudget that the bodies of one account, or of one client address, may hold at
	// once (never less than one body of MaxBodyBytes), so that no tenant, user or address can take the budget
	// the others need; 0 < BodyShare <= 1, 1 = no share of its own; default 0.125 (8MiB of 64MiB).
	BodyShare float64
	// MinUploadRate and UploadGrace drop a request body that arrives too slowly: once its reading began, a body
	// must have delivered MinUploadRate bytes for every second past UploadGrace (else it is answered 408 and
	// its connection closed), so that a trickle cannot hold its part of the budget for the whole ReadTimeout.
	// Default 4KiB/s after 5s; a MinUploadRate of 0 = no minimum.
	MinUploadRate int64
	UploadGrace   time.Duration
	// MaxConnsPerPrefix bounds the open client connections of one client network, an IPv4 /24 or an IPv6 /64
	// (trusted proxies exempt); default 1024.
	MaxConnsPerPrefix int
	// HeaderTimeout bounds the time a request head takes to arrive, from its first byte or, on a new
	// connection, from its acceptance; default 5s; 0 = only ReadTimeout.
	HeaderTimeout time.Duration
	// TrustedProxies are the networks (CIDR, or a single IP) of the proxies in front of the gateway, or of
	// the gateways and proxies in front of a `reqgate core`: only from them are X-Forwarded-Proto and
	// X-Forwarded-Host believed (and, by the gateway, X-Forwarded-For). Default none.
	TrustedProxies []string
	// TLSCertFile and TLSKeyFile are PEM files of the certificate (chain) and private key the gateway's public
	// listener presents (roles serve and gateway): set both to serve HTTPS, neither to serve plain HTTP (the
	// default). The files are read again on SIGHUP.
	TLSCertFile, TLSKeyFile string
}

// Admin configures the admin listener.
type Admin struct {
	// PProf serves Go's profiler at /debug/pprof/ on the admin listener; default false. On a listener that is
	// not loopback it is served only with a TokenFile.
	PProf bool
	// TokenFile is a file holding the bearer token every admin endpoint but /healthz, /readyz and /metrics
	// asks for (Authorization: Bearer TOKEN); read again on a reload, like the TLS files. Default none: the
	// endpoints are open on a loopback listener, and /purge and the profiler are off on any other.
	TokenFile string
}

// Store is how the core reaches its store.
type Store struct {
	// PasswordFile is a file holding the password of a postgres:// DB URL that names none, so that the
	// password is neither on the command line nor in the config file. Default none.
	PasswordFile string

	// ConnectTimeout is how long a PostgreSQL store that does not answer at start (refused, unreachable, not
	// resolvable, starting up) is retried, with backoff, before the process gives up; the admin /healthz answers
	// meanwhile and /readyz says 503. Other refusals (a wrong password, a missing database) end the start at
	// once, and so does any SQLite error. Default 30s; 0 tries once.
	ConnectTimeout time.Duration
}

// Log selects the log/slog handler.
type Log struct {
	Level  string // debug | info | warn | error; default info
	Format string // json | text; default json (one structured line per record; the access log is JSON)
}

// Upstream is how the gateway reaches the core.
type Upstream struct {
	URL              string        // base URL of the core, or a comma-separated list; default http://127.0.0.1:8081
	Timeout          time.Duration // whole upstream exchange; default 30s
	QueueTimeout     time.Duration // longest wait in the gateway before forwarding (longer: 503, not forwarded); default 2s; 0 = no bound
	MaxIdleConns     int           // connections per upstream core; default 512
	MaxConnWait      time.Duration // wait for a free upstream connection before 503; default 1s
	MaxResponseBytes int64         // largest upstream response body (larger: 502); default 64MiB
	SlowStart        time.Duration // a core back after being out reaches its full share of requests over this; default 10s, 0 = at once
	// MaxInflightPerAccount bounds the requests of one account (the api_key of the path; requests without one
	// share a bucket) in flight from this gateway to the cores; one over it waits for a slot (at most
	// MaxConnWait, and never past its QueueTimeout), then gets 503. Default InflightPerAccount(MaxIdleConns): it
	// follows max_idle_conns when not set itself; 0 = no cap.
	MaxInflightPerAccount int
	// Verify is how the gateway learns that a credential is an account's: proof (the core's
	// Reqgate-Authenticated header, reqgate's own core) or probe (a 2xx answer to an authenticated GET of
	// VerifyPath, any implementation of the interface); default proof.
	Verify string
	// VerifyPath is the path probe mode asks with the credential alone, {key} the account's api_key; it must be
	// one the upstream always authenticates. Default /api2/{key}/re/field.
	VerifyPath string
	// Host is the Host header sent to the cores; default "", the host of the first upstream.url.
	Host string
	// TLS is how the gateway speaks to https:// upstreams.
	TLS UpstreamTLS
}

// UpstreamTLS is the client side of TLS to https:// upstreams: by default the certificate is verified against the
// system's roots, for the host of each upstream URL (also sent as SNI), and no client certificate is presented.
type UpstreamTLS struct {
	ServerName string // the name sent as SNI and verified in the certificate, instead of each URL's host; default ""
	CAFile     string // PEM file of the CAs to trust instead of the system's roots; default ""
	CertFile   string // PEM client certificate presented to the upstream, with KeyFile; default none
	KeyFile    string // its PEM key
}

// The values of upstream.verify.
const (
	VerifyProof = "proof" // the core's Reqgate-Authenticated header
	VerifyProbe = "probe" // a 2xx answer to an authenticated GET of upstream.verify_path
)

// URLs returns the upstream base URLs of a comma-separated URL: one per core, when the gateway balances several.
func (u Upstream) URLs() []string { return splitList(u.URL) }

// Redis is the shared Redis of the gateway replicas.
type Redis struct {
	URL     string        // redis://[user:password@]host:port/db, rediss:// or unix://; "" = none (in-process)
	Timeout time.Duration // dial, read and write timeout of the client, each unless URL sets it; default 1s
	// PasswordFile is a file holding the password of a URL that names none, so that the password is neither
	// on the command line nor in the config file. Default none.
	PasswordFile string
	// Namespace prefixes every key and channel reqgate uses in Redis ("<namespace>:reqgate:..."), so that
	// deployments sharing one Redis share nothing; default "", the names "reqgate:..." themselves.
	Namespace string
	// Sentinel and Cluster name a Redis of several nodes instead of URL: at most one of the three is set.
	Sentinel RedisSentinel
	Cluster  RedisCluster
}

// RedisSentinel is a Redis master watched by a Sentinel group: the client asks the Sentinels for the master and
// follows it through failovers.
type RedisSentinel struct {
	Master       string   // the master's name in the Sentinels' configuration
	Addrs        []string // host:port of the Sentinels
	PasswordFile string   // the Sentinels' password, when it differs from the nodes' (Redis.PasswordFile); default none
}

// RedisCluster is a Redis Cluster: some of its nodes, from which the client learns the others.
type RedisCluster struct {
	Addrs []string // host:port of nodes of the cluster
}

// Configured reports whether a Redis is configured: a URL, a Sentinel group or a cluster.
func (r Redis) Configured() bool {
	return r.URL != "" || len(r.Sentinel.Addrs) > 0 || len(r.Cluster.Addrs) > 0
}

// Cache configures the gateway's response cache.
type Cache struct {
	Enabled      bool          // default true
	MaxBytes     int64         // memory budget of the response cache, the heap it holds; default 256MiB
	TTL          time.Duration // freshness of a cached GET; default 30s
	StaleIfError time.Duration // how long a stale entry may stand in when the upstream fails; default 5m; 0 = never
	// ReplicaLease is how long a replica on the Redis bus may serve hits after it last proved it has applied
	// every invalidation, and how long a write waits at most for a replica that does not acknowledge it;
	// default 1s.
	ReplicaLease time.Duration
	Scope        string // account | user; default account
	// TTLByRoute shortens TTL for the reads of some route classes, as "class=duration" (record=10s); default
	// none. ParseTTLByRoute reads it.
	TTLByRoute []string
}

// Auth configures credential verification at the gateway.
type Auth struct {
	TTL time.Duration // how long a verified credential is trusted without asking the core; default 60s; 0 = never

	// Failed Basic-auth attempts allowed within FailureWindow per username (of an api_key) from one client
	// IP, per client IP, and per username from all IPs together; further attempts are rejected until the
	// window passes. Defaults 10, 30, 100 and 1m.
	MaxUserFailures       int
	MaxIPFailures         int
	MaxUserFailuresAllIPs int
	FailureWindow         time.Duration

	// KnownAddressTTL is how long the network (/24, /64) of a verified login stays known for its user: from it,
	// failures from elsewhere (MaxUserFailuresAllIPs) hold no login back; default 168h (a week); 0 = never.
	KnownAddressTTL time.Duration
	// MaxLoginDelay bounds the wait of an attempt past MaxUserFailuresAllIPs from a network that is not known
	// (250ms, doubling per such attempt in the window); default 8s; 0 = refused instead.
	MaxLoginDelay time.Duration
	// MaxDelayedLogins bounds the attempts waiting at once, all users together (4 per user); default 256.
	MaxDelayedLogins int
}

// Core holds settings of the core service.
type Core struct {
	SchemaTTL time.Duration // how long an account's objects, fields and users stay in memory; default 2s; 0 = never
	// AuthProof: the core sends its Reqgate-Authenticated proof with every authenticated answer; default true.
	// Off, it answers as another implementation of the interface does (a gateway in front needs upstream.verify:
	// probe).
	AuthProof bool
}

// RateLimit configures the gateway's rate limiter.
type RateLimit struct {
	RejectStatus int           // 429 | 503; default 429
	OnRedisError string        // local | allow | deny; default local
	RedisTimeout time.Duration // budget of one Redis round trip on the request path; default 100ms (docs/performance.md)
	RedisBackoff time.Duration // time on the fallback after the switch, and between failed probes, before probing again; default 1s
	// RedisFailures is how many Redis failures in a row (the calls of one stall counting once) switch the limiter
	// to the fallback; default 3.
	RedisFailures int
	// LocalReplicas is how many gateway replicas are assumed to share the limits until a replica has counted
	// them in Redis: while Redis is unavailable and OnRedisError is local, each replica admits limit/N, N the
	// replicas it last counted, or LocalReplicas before its first count. Default 1.
	LocalReplicas int
	MaxHeld       int        // shaped requests held at once per policy key; default 256; 0 = none
	Policies      []Policy   // default none: no limit applies
	Overrides     []Override // default none
}

// Policy is one rate-limit policy. Every policy that matches a request must admit it.
type Policy struct {
	Name     string        // the RateLimit-Policy name
	Key      string        // api_key | user | ip
	Limit    int           // requests ...
	Period   time.Duration // ... per period
	Burst    int           // how many may arrive at once; the file's default is Limit; gcra only
	MaxDelay time.Duration // hold a request up to this long for its slot instead of rejecting; default 0; gcra only

	Algorithm string        // gcra | window; default gcra
	Block     time.Duration // window only: refuse every request this long once one is refused; default 0: no block
}

// Override replaces a policy's rate for one API key.
type Override struct {
	APIKey string
	Policy string // name of a Policy
	Limit  int
	Period time.Duration
	Burst  int // the file's default is Limit
}

// CORS configures cross-origin access to the gateway.
type CORS struct {
	AllowedOrigins []string // exact origins ("https://app.example.com") or "*"; default none
}

// Reload configures the live reload of the configuration (SIGHUP reloads it always).
type Reload struct {
	// Watch is how often the --config file and the account files are checked for a change (modification time
	// and size), which reloads them as SIGHUP does; default 0: never, only SIGHUP reloads.
	Watch time.Duration
}

// Tracing configures OpenTelemetry tracing: spans exported over OTLP/HTTP, off while Endpoint is empty.
type Tracing struct {
	Endpoint    string  // OTLP/HTTP base URL of a collector (http://collector:4318); default "" (off)
	SampleRatio float64 // share of new traces recorded, 0..1; a caller's sampled flag is followed; default 1
	ServiceName string  // service.name resource attribute; default "" = reqgate-<role>
}

// Metrics configures what /metrics says beyond the fixed families.
type Metrics struct {
	// TopAccounts is how many of the busiest accounts get request, error, throttle and cache-hit series of their
	// own on a gateway (label account); every other account counts under account="other". 0 to 1000; default 20;
	// 0 = no per-account series.
	TopAccounts int
}

// Default returns the complete default configuration of a role. An unknown role gets the serve defaults
// (Validate refuses the role).
func Default(role string) *Config {
	listen := "127.0.0.1:8080"
	if role == RoleCore {
		listen = "127.0.0.1:8081"
	}
	return &Config{
		Role:        role,
		Listen:      listen,
		AdminListen: "127.0.0.1:9090",
		Admin:       Admin{},
		DB:          "./data/reqgate.db",
		Server: Server{
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       60 * time.Second,
			ShutdownTimeout:   15 * time.Second,
			MaxBodyBytes:      1 << 20,
			BodyBudget:        64 << 20,
			BodyShare:         0.125,
			MinUploadRate:     4 << 10,
			UploadGrace:       5 * time.Second,
			MaxConns:          10_000,
			MaxConnsPerIP:     256,
			MaxConnsPerPrefix: 1024,
			HeaderTimeout:     5 * time.Second,
		},
		Store: Store{ConnectTimeout: 30 * time.Second},
		Log:   Log{Level: "info", Format: "json"},
		Upstream: Upstream{
			URL:              "http://127.0.0.1:8081",
			Timeout:          30 * time.Second,
			QueueTimeout:     2 * time.Second,
			MaxIdleConns:     512,
			MaxConnWait:      time.Second,
			MaxResponseBytes: 64 << 20,
			SlowStart:        10 * time.Second,
			// Load derives it again from the max_idle_conns it ends with, unless it is set itself.
			MaxInflightPerAccount: InflightPerAccount(512),
			Verify:                VerifyProof,
			VerifyPath:            "/api2/{key}/re/field",
		},
		Redis: Redis{Timeout: time.Second},
		Cache: Cache{
			Enabled:      true,
			MaxBytes:     256 << 20,
			TTL:          30 * time.Second,
			StaleIfError: 5 * time.Minute,
			ReplicaLease: time.Second,
			Scope:        "account",
		},
		Auth: Auth{TTL: 60 * time.Second, MaxUserFailures: 10, MaxIPFailures: 30, MaxUserFailuresAllIPs: 100, FailureWindow: time.Minute,
			KnownAddressTTL: 7 * 24 * time.Hour, MaxLoginDelay: 8 * time.Second, MaxDelayedLogins: 256},
		Core: Core{SchemaTTL: 2 * time.Second, AuthProof: true},
		RateLimit: RateLimit{
			RejectStatus:  429,
			OnRedisError:  "local",
			RedisTimeout:  100 * time.Millisecond,
			RedisBackoff:  time.Second,
			RedisFailures: 3,
			LocalReplicas: 1,
			MaxHeld:       256,
		},
		Tracing: Tracing{SampleRatio: 1},
		Metrics: Metrics{TopAccounts: 20},
	}
}

// InflightPerAccount is the default of upstream.max_inflight_per_account for maxIdleConns connections per core:
// a quarter of them, at least 4. So it takes four accounts at their cap to fill a core's connections (one alone
// cannot take them all), and on a small pool an account still has a few requests in flight at once.
func InflightPerAccount(maxIdleConns int) int { return max(4, maxIdleConns/4) }

// derive gives the settings whose default follows another setting their value, unless they were set.
func (c *Config) derive() {
	if _, set := c.sources[pathInflight]; !set {
		c.Upstream.MaxInflightPerAccount = InflightPerAccount(c.Upstream.MaxIdleConns)
	}
}

// Source reports where the value of a key path came from: "default", "flag --x", "env REQGATE_X" or "file:line".
func (c *Config) Source(path string) string {
	if s, ok := c.sources[path]; ok {
		return s
	}
	return "default"
}

// sourceOf finds the source of path or of its nearest parent (a policy's fields fall back to the policy).
func (c *Config) sourceOf(path string) string {
	for p := path; p != ""; {
		if s, ok := c.sources[p]; ok {
			return s
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return ""
}

func (c *Config) setSource(path, src string) {
	if c.sources == nil {
		c.sources = make(map[string]string)
	}
	c.sources[path] = src
}

func (c *Config) markBad(path string) {
	if c.bad == nil {
		c.bad = make(map[string]bool)
	}
	c.bad[path] = true
}

// splitList splits a comma-separated list, trimming blanks and dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
