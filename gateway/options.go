package gateway

import (
	"errors"
	"fmt"
	"github.com/reqgate/reqgate/internal/wire/route"
	"log/slog"
	"net/netip"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/internal/redisns"
)

// Values of the Options that are not configuration keys, taken when the field is zero.
const (
	DefaultHealthTimeout       = time.Second
	DefaultFailureStoreTimeout = 250 * time.Millisecond
	DefaultMaxFailureKeys      = 200_000
	DefaultMaxKnownUsers       = 100_000
)

// Options carry everything the gateway takes from the configuration. The configured values come resolved
// from package config, which alone holds their defaults (OptionsFrom maps them); New refuses an impossible
// one rather than putting a default in its place. Only the fields that are no configuration key (HealthTimeout,
// MaxFailureKeys, MaxKnownUsers, FailureStoreTimeout, Logger, Now) take a value of their own when zero.
type Options struct {
	// Upstreams are the base URLs of the cores, e.g. http://127.0.0.1:8081; a path in them prefixes every
	// forwarded path (the same for all). Several cores are balanced by least load; the first one's host is the
	// Host header sent upstream. At least one.
	Upstreams []string
	// UpstreamHost, when set, is the Host header sent upstream instead of the first core's host.
	UpstreamHost string
	// UpstreamTLS is how the gateway speaks to https:// cores (upstreamtls.go); its zero value verifies each
	// core's certificate against the system's roots for the host of its URL, which is also the SNI.
	UpstreamTLS UpstreamTLS
	// HealthInterval is how often each core's /readyz is probed when there are several cores; 0 = never (a
	// core that refused a connection is then skipped for 1s). HealthTimeout bounds one probe; if zero, 1s.
	HealthInterval, HealthTimeout time.Duration
	// SlowStart is how long a core put back after being out takes to reach its full share of the requests: it
	// starts at a tenth of a healthy core's share and grows linearly; 0 = at once.
	SlowStart time.Duration
	// UpstreamTimeout bounds one upstream exchange (dial, write, read); > 0. The core is told (budget.Header)
	// to give up on the request a little before the gateway does.
	UpstreamTimeout time.Duration
	// QueueTimeout is the longest a request may wait in the gateway before it is forwarded, counted from when its
	// headers were read, less the time its body took to arrive and a rate policy's hold; a request that waited
	// longer is answered 503 and never forwarded (deadline.go); 0 = no bound.
	QueueTimeout time.Duration
	// MaxIdleConns is the connection limit per core; > 0.
	MaxIdleConns int
	// MaxConnWait is how long a request waits for a free upstream connection before 503; > 0.
	MaxConnWait time.Duration
	// MaxInflightPerAccount bounds the requests of one account (the api_key of the path; requests without one
	// share a bucket) in flight to the cores at once; one over it waits for a slot up to MaxConnWait, within its
	// QueueTimeout, then gets 503 with Retry-After, never sent (inflight.go). Cached hits and credential checks
	// take no slot. 0 = no cap.
	MaxInflightPerAccount int
	// MaxBodyBytes is the largest request body; larger ones get 413 before they reach the core; > 0.
	MaxBodyBytes int
	// BodyBudget bounds the bytes of request bodies held at once, all requests together; a body that does not
	// fit gets 503; at least MaxBodyBytes.
	BodyBudget int64
	// BodyShare is the part of BodyBudget the bodies of one account, or of one client address, may hold at once
	// (never less than MaxBodyBytes); a body past it gets 503; 0 < BodyShare <= 1 (1: no share of its own).
	BodyShare float64
	// MinUploadRate is the bytes per second a request body must arrive at once UploadGrace has passed since the
	// gateway began to read it (or sent 100 Continue for it); a slower body is answered 408 and its connection
	// closed. 0 = no minimum; UploadGrace is then unused, else it must be > 0.
	MinUploadRate int64
	UploadGrace   time.Duration
	// MaxConns bounds the open client connections; MaxConnsPerIP those of one client IP, MaxConnsPerPrefix
	// those of one client network, an IPv4 /24 or an IPv6 /64 (trusted proxies exempt from both; one over a
	// cap is answered 429 and closed); all > 0. Near MaxConns a new connection takes the place of the oldest
	// connection waiting for a request head or idle, those of the networks holding the most first (conns.go).
	MaxConns, MaxConnsPerIP, MaxConnsPerPrefix int
	// HeaderTimeout bounds the time a request head takes to arrive, from its first byte or, on a new
	// connection, from its acceptance; a late one gets 408 and the connection is closed; 0 = no bound of its
	// own (ReadTimeout still holds).
	HeaderTimeout time.Duration
	// MaxResponseBytes is the largest upstream response body; larger ones give 502; > 0.
	MaxResponseBytes int
	// ReadTimeout, WriteTimeout and IdleTimeout are the caller-side server timeouts; 0 = none, as in fasthttp
	// (an IdleTimeout of 0 is ReadTimeout). Serve and ServeTLS hold them in the connection table (conns.go); a
	// server of the caller's own running Handler sets its own.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration

	// Cache configures the response cache.
	Cache CacheOptions

	// Verify is how a credential is verified for an account: config.VerifyProof, on the core's
	// Reqgate-Authenticated proof (proof.go), or config.VerifyProbe, on a 2xx answer to a GET of VerifyPath with
	// the credential alone (probe.go), for any other implementation of the interface.
	Verify string
	// VerifyPath is the path of VerifyProbe, {key} the account's api_key (escaped).
	VerifyPath string

	// AuthTTL is how long a credential the core accepted is trusted for cached reads; 0 = never remembered
	// (every read goes to the core).
	AuthTTL time.Duration
	// MaxUserFailures, MaxIPFailures and MaxUserFailuresAllIPs are the failed authentication attempts allowed
	// within FailureWindow per username (of an api_key) from one client IP, per client IP, and per username
	// from all IPs together. Past either of the first two, further attempts get RejectStatus; past the third,
	// attempts from a network of KnownAddressTTL go on and others wait (MaxLoginDelay). All > 0.
	MaxUserFailures, MaxIPFailures, MaxUserFailuresAllIPs int
	FailureWindow                                         time.Duration
	// KnownAddressTTL is how long the network (/24 of an IPv4 address, /64 of an IPv6 one) of a login the
	// core proved stays known for its user: from it, failures from elsewhere (MaxUserFailuresAllIPs) hold no
	// login back; 0 = never remembered. MaxKnownUsers bounds the users whose networks the process remembers
	// (8 networks each); if zero, DefaultMaxKnownUsers.
	KnownAddressTTL time.Duration
	MaxKnownUsers   int
	// MaxLoginDelay bounds the wait of an attempt past MaxUserFailuresAllIPs from a network that is not known:
	// 250ms for the first in the window, doubling with each after it; 0 = such attempts are refused until the
	// window ends. MaxDelayedLogins bounds the attempts waiting at once, all users together (and 4 per user);
	// one more is refused with RejectStatus and Retry-After. Both >= 0.
	MaxLoginDelay    time.Duration
	MaxDelayedLogins int
	// RejectStatus is the status of a login attempt refused after too many failures: 429, or 503 for the
	// mirrored service's clients (ratelimit.reject_status).
	RejectStatus int
	// MaxFailureKeys bounds the failed-login counters held in the process (each counter is one username and
	// address, one address or one username). A full store never forgets a counter whose window is open: new
	// counters share coarser ones until windows end. If zero, DefaultMaxFailureKeys.
	MaxFailureKeys int

	// FailureStoreTimeout bounds one Redis call of the failed-login counts; a slower Redis counts as down for a
	// second (each replica then counts alone). If zero, DefaultFailureStoreTimeout.
	FailureStoreTimeout time.Duration

	// Redis, when set, carries cache invalidations to the other replicas and holds the failed-login counts
	// they share (so the limits hold across replicas). Nil: in-process only.
	Redis redis.UniversalClient
	// RedisNamespace (redis.namespace) prefixes the invalidation channel and the failed-login keys in Redis, so
	// that deployments sharing one Redis share neither; "" keeps the names "reqgate:inval" and
	// "reqgate:authfail:...". It must pass redisns.Check. On a Redis Cluster the names carry it as one hash tag
	// (redisns.On), and the bus uses sharded pub/sub.
	RedisNamespace string

	// Limiter, when set, limits request rates before forwarding. Nil: no limits.
	Limiter Limiter

	// TrustedProxies are the networks (config.ParseNetworks reads them) of TLS-terminating proxies in front of
	// the gateway: from them X-Forwarded-Proto and X-Forwarded-Host say the scheme and host the caller used
	// (for Location and the core), and X-Forwarded-For the caller's address (for the per-IP login limit, ip
	// rate policies and the access log). Empty: never believed.
	TrustedProxies []netip.Prefix

	// CORSOrigins are the origins allowed to call the gateway from a browser. Empty: no CORS headers.
	CORSOrigins []string

	// Logger receives the access log (Info, one line per request) and errors. Nil: discarded.
	Logger *slog.Logger
	// AccessLog, when set, writes the access log instead of Logger: the same lines, encoded in a fifth of
	// slog's time (see package accesslog). Like Logger's, its lines are written only while Logger is enabled
	// for Info, whose level may change while the gateway runs (slog.LevelVar).
	AccessLog *accesslog.Logger
	// TopAccounts is how many of the busiest accounts get request, error, throttle and cache-hit series of their
	// own (package tenants); the requests of every other account count under account="other". Only callers the
	// core proved are counted, so no stranger can name a label. 0 = no per-account series.
	TopAccounts int
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
	MaxBytes     int64         // cache.max_bytes; > 0 when Enabled
	TTL          time.Duration // cache.ttl; > 0 when Enabled
	StaleIfError time.Duration // cache.stale_if_error; 0 = never serve stale
	ReplicaLease time.Duration // cache.replica_lease, with Redis; 0 = cache.DefaultLease
	Scope        string        // cache.scope: "account" or "user"
	// TTLByRoute shortens TTL for the reads of some route classes (cache.ttl_by_route): an entry older than
	// its class's TTL is not served as a hit. Nil: TTL for every class.
	TTLByRoute map[route.Class]time.Duration
}

// check refuses the values no configuration can mean.
func (o *Options) check() error {
	checks := []struct {
		ok   bool
		what string
	}{
		{len(o.Upstreams) > 0, "no upstream"},
		{o.UpstreamTimeout > 0, "UpstreamTimeout must be > 0"},
		{o.QueueTimeout >= 0, "QueueTimeout must not be negative (0 = no bound)"},
		{o.MaxIdleConns > 0, "MaxIdleConns must be > 0"},
		{o.MaxConnWait > 0, "MaxConnWait must be > 0"},
		{o.MaxInflightPerAccount >= 0, "MaxInflightPerAccount must not be negative (0 = no cap)"},
		{o.TopAccounts >= 0, "TopAccounts must not be negative (0 = no per-account series)"},
		{o.MaxBodyBytes > 0, "MaxBodyBytes must be > 0"},
		{o.BodyBudget >= int64(o.MaxBodyBytes), "BodyBudget must be >= MaxBodyBytes"},
		{o.BodyShare > 0 && o.BodyShare <= 1, "BodyShare must be > 0 and <= 1"},
		{o.MinUploadRate >= 0 && (o.MinUploadRate == 0 || o.UploadGrace > 0), "MinUploadRate must not be negative, and UploadGrace must be > 0 with it"},
		{o.MaxConns > 0 && o.MaxConnsPerIP > 0 && o.MaxConnsPerPrefix > 0, "MaxConns, MaxConnsPerIP and MaxConnsPerPrefix must be > 0"},
		{o.HeaderTimeout >= 0, "HeaderTimeout must not be negative (0 = no bound of its own)"},
		{o.MaxResponseBytes > 0, "MaxResponseBytes must be > 0"},
		{o.HealthInterval >= 0 && o.HealthTimeout >= 0, "HealthInterval and HealthTimeout must not be negative"},
		{o.SlowStart >= 0, "SlowStart must not be negative"},
		{o.ReadTimeout >= 0 && o.WriteTimeout >= 0 && o.IdleTimeout >= 0, "server timeouts must not be negative"},
		{o.AuthTTL >= 0, "AuthTTL must not be negative (0 = never)"},
		{o.Verify == config.VerifyProof || o.Verify == config.VerifyProbe && validVerifyPath(o.VerifyPath),
			fmt.Sprintf("Verify %q, VerifyPath %q: want proof, or probe with an absolute path naming {key}", o.Verify, o.VerifyPath)},
		{o.MaxUserFailures > 0 && o.MaxIPFailures > 0 && o.MaxUserFailuresAllIPs > 0, "the failed-login limits must be > 0"},
		{o.FailureWindow > 0, "FailureWindow must be > 0"},
		{o.KnownAddressTTL >= 0, "KnownAddressTTL must not be negative (0 = never)"},
		{o.MaxLoginDelay >= 0 && o.MaxDelayedLogins >= 0, "MaxLoginDelay and MaxDelayedLogins must not be negative"},
		{o.RejectStatus == 429 || o.RejectStatus == 503, fmt.Sprintf("RejectStatus %d: want 429 or 503", o.RejectStatus)},
		{o.Cache.Scope == "account" || o.Cache.Scope == "user", fmt.Sprintf("cache scope %q: want account or user", o.Cache.Scope)},
	}
	var errs []error
	for _, c := range checks {
		if !c.ok {
			errs = append(errs, errors.New("gateway: "+c.what))
		}
	}
	if err := redisns.Check(o.RedisNamespace); err != nil {
		errs = append(errs, fmt.Errorf("gateway: RedisNamespace %q: %w", o.RedisNamespace, err))
	}
	return errors.Join(errs...)
}

// fill gives the fields that are no configuration key their value when zero.
func (o *Options) fill() {
	if o.HealthTimeout == 0 {
		o.HealthTimeout = DefaultHealthTimeout
	}
	if o.MaxFailureKeys <= 0 {
		o.MaxFailureKeys = DefaultMaxFailureKeys
	}
	if o.MaxKnownUsers <= 0 {
		o.MaxKnownUsers = DefaultMaxKnownUsers
	}
	if o.FailureStoreTimeout <= 0 {
		o.FailureStoreTimeout = DefaultFailureStoreTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
		o.wallClock = true
	}
}
