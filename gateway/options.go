package gateway

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/gateway/accesslog"
)

// Defaults of Options.
const (
	DefaultUpstream              = "http://127.0.0.1:8081"
	DefaultUpstreamTimeout       = 30 * time.Second
	DefaultHealthInterval        = time.Second
	DefaultHealthTimeout         = time.Second
	DefaultMaxIdleConns          = 512
	DefaultMaxConnWait           = time.Second
	DefaultMaxBodyBytes          = 1 << 20
	DefaultBodyBudget            = 64 << 20
	DefaultMaxConns              = 10_000
	DefaultMaxConnsPerIP         = 256
	DefaultMaxResponse           = 64 << 20
	DefaultAuthTTL               = 60 * time.Second
	DefaultFailureWindow         = time.Minute
	DefaultMaxUserFailures       = 10
	DefaultMaxIPFailures         = 30
	DefaultMaxUserFailuresAllIPs = 100
)

// Options carry everything the gateway takes from the configuration. Zero values take the defaults.
type Options struct {
	// Upstreams are the base URLs of the cores, e.g. http://127.0.0.1:8081; a path in them prefixes every
	// forwarded path (the same for all). Several cores are balanced by least load; the first one's host is the
	// Host header sent upstream. If empty, DefaultUpstream.
	Upstreams []string
	// HealthInterval is how often each core's /readyz is probed when there are several cores. If zero, 1s;
	// negative: no probes (a core that refused a connection is skipped for 1s). HealthTimeout bounds one
	// probe; if zero, 1s.
	HealthInterval, HealthTimeout time.Duration
	// UpstreamTimeout bounds one upstream exchange (dial, write, read). If zero, 30s.
	UpstreamTimeout time.Duration
	// MaxIdleConns is the connection limit per core. If zero, 512.
	MaxIdleConns int
	// MaxConnWait is how long a request waits for a free upstream connection before 503. If zero, 1s.
	MaxConnWait time.Duration
	// MaxBodyBytes is the largest request body; larger ones get 413 before they reach the core. If zero, 1 MiB.
	MaxBodyBytes int
	// BodyBudget bounds the bytes of request bodies held at once, all requests together; a body that does not
	// fit gets 503. If zero, 64 MiB (at least MaxBodyBytes).
	BodyBudget int64
	// MaxConns bounds the open client connections; MaxConnsPerIP those of one client IP (trusted proxies
	// exempt; one over the cap is answered 429 and closed). If zero: 10,000 and 256.
	MaxConns, MaxConnsPerIP int
	// MaxResponseBytes is the largest upstream response body; larger ones give 502. If zero, 64 MiB.
	MaxResponseBytes int
	// ReadTimeout, WriteTimeout and IdleTimeout are the caller-side server timeouts. If zero: 30s, 30s, 60s.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration

	// Cache configures the response cache.
	Cache CacheOptions

	// AuthTTL is how long a credential the core accepted is trusted for cached reads. If zero, 60s;
	// negative: never remembered (every read goes to the core).
	AuthTTL time.Duration
	// MaxUserFailures, MaxIPFailures and MaxUserFailuresAllIPs are the failed authentication attempts allowed
	// within FailureWindow per username (of an api_key) from one client IP, per client IP, and per username
	// from all IPs together; further attempts get 429. If zero: 10, 30, 100 and 1m.
	MaxUserFailures, MaxIPFailures, MaxUserFailuresAllIPs int
	FailureWindow                                         time.Duration

	// FailureStoreTimeout bounds one Redis call of the failed-login counts; a slower Redis counts as down for a
	// second (each replica then counts alone). If zero, 250ms.
	FailureStoreTimeout time.Duration

	// Redis, when set, carries cache invalidations to the other replicas and holds the failed-login counts
	// they share (so the limits hold across replicas). Nil: in-process only.
	Redis *redis.Client

	// Limiter, when set, limits request rates before forwarding. Nil: no limits.
	Limiter Limiter

	// TrustedProxies are the networks (CIDR, or single IP addresses) of TLS-terminating proxies in front of
	// the gateway: from them X-Forwarded-Proto and X-Forwarded-Host say the scheme and host the caller used
	// (for Location and the core), and X-Forwarded-For the caller's address (for the per-IP login limit, ip
	// rate policies and the access log). Empty: never believed.
	TrustedProxies []string

	// CORSOrigins are the origins allowed to call the gateway from a browser. Empty: no CORS headers.
	CORSOrigins []string

	// Logger receives the access log (Info, one line per request) and errors. Nil: discarded.
	Logger *slog.Logger
	// AccessLog, when set, writes the access log instead of Logger: the same lines, encoded in a fifth of
	// slog's time (see package accesslog). The caller sets it only when Logger's level lets Info through.
	AccessLog *accesslog.Logger
	// Tracer, when set, traces every request (tracing.go): a server span that continues the caller's W3C
	// traceparent, child spans for the stages, and the traceparent sent to the core. Nil: no tracing, at no cost.
	Tracer trace.Tracer
	// Now is the clock of the cache and the credential store. Nil: time.Now.
	Now       func() time.Time
	wallClock bool // Now was nil: the server's own reading of the clock at each request stands in for it
}

// CacheOptions configure the response cache (config keys cache.*).
type CacheOptions struct {
	Enabled      bool          // cache.enabled; the config default is true
	MaxBytes     int64         // cache.max_bytes; if zero, 256 MiB
	TTL          time.Duration // cache.ttl; if zero, 30s
	StaleIfError time.Duration // cache.stale_if_error; if zero, 5m; negative: never serve stale
	Scope        string        // cache.scope: "account" (default) or "user"
}

func (o *Options) defaults() {
	if len(o.Upstreams) == 0 {
		o.Upstreams = []string{DefaultUpstream}
	}
	if o.HealthInterval == 0 {
		o.HealthInterval = DefaultHealthInterval
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = DefaultHealthTimeout
	}
	if o.UpstreamTimeout <= 0 {
		o.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = DefaultMaxIdleConns
	}
	if o.MaxConnWait <= 0 {
		o.MaxConnWait = DefaultMaxConnWait
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyBudget <= 0 {
		o.BodyBudget = DefaultBodyBudget
	}
	o.BodyBudget = max(o.BodyBudget, int64(o.MaxBodyBytes))
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxConnsPerIP <= 0 {
		o.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponse
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.AuthTTL == 0 {
		o.AuthTTL = DefaultAuthTTL
	}
	if o.MaxUserFailures <= 0 {
		o.MaxUserFailures = DefaultMaxUserFailures
	}
	if o.MaxIPFailures <= 0 {
		o.MaxIPFailures = DefaultMaxIPFailures
	}
	if o.MaxUserFailuresAllIPs <= 0 {
		o.MaxUserFailuresAllIPs = DefaultMaxUserFailuresAllIPs
	}
	if o.FailureStoreTimeout <= 0 {
		o.FailureStoreTimeout = 250 * time.Millisecond
	}
	if o.FailureWindow <= 0 {
		o.FailureWindow = DefaultFailureWindow
	}
	if o.Cache.Scope == "" {
		o.Cache.Scope = "account"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
		o.wallClock = true
	}
}
