package gateway

import (
	"fmt"

	"github.com/reqgate/reqgate/config"
)

// OptionsFrom maps the resolved configuration to the gateway's options: every configuration key the gateway
// reads, and nothing else. It is the one mapping, used by cmd/reqgate and by the tests alike, so that a test's
// gateway is the binary's under the same configuration. What is no configuration key stays zero for the caller
// to set: the Redis client, the limiter, the logger, the access log, the tracer and the health-probe period.
// Upstreams are upstream.url's cores; `reqgate serve` puts its own core in their place.
func OptionsFrom(cfg *config.Config) (Options, error) {
	proxies, err := cfg.Server.TrustedNetworks()
	if err != nil {
		return Options{}, err
	}
	ttlByRoute, err := config.ParseTTLByRoute(cfg.Cache.TTLByRoute, cfg.Cache.TTL)
	if err != nil {
		return Options{}, fmt.Errorf("cache.ttl_by_route: %w", err)
	}
	return Options{
		Upstreams:         cfg.Upstream.URLs(),
		UpstreamHost:      cfg.Upstream.Host,
		UpstreamTLS:       UpstreamTLS(cfg.Upstream.TLS),
		UpstreamTimeout:   cfg.Upstream.Timeout,
		SlowStart:         cfg.Upstream.SlowStart,
		QueueTimeout:      cfg.Upstream.QueueTimeout,
		MaxIdleConns:      cfg.Upstream.MaxIdleConns,
		MaxConnWait:       cfg.Upstream.MaxConnWait,
		MaxBodyBytes:      int(cfg.Server.MaxBodyBytes),
		BodyBudget:        cfg.Server.BodyBudget,
		BodyShare:         cfg.Server.BodyShare,
		MinUploadRate:     cfg.Server.MinUploadRate,
		UploadGrace:       cfg.Server.UploadGrace,
		MaxConns:          cfg.Server.MaxConns,
		MaxConnsPerIP:     cfg.Server.MaxConnsPerIP,
		MaxConnsPerPrefix: cfg.Server.MaxConnsPerPrefix,
		HeaderTimeout:     cfg.Server.HeaderTimeout,
		MaxResponseBytes:  int(cfg.Upstream.MaxResponseBytes),
		ReadTimeout:       cfg.Server.ReadTimeout,
		WriteTimeout:      cfg.Server.WriteTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
		TrustedProxies:    proxies,
		Cache: CacheOptions{
			Enabled:      cfg.Cache.Enabled,
			MaxBytes:     cfg.Cache.MaxBytes,
			TTL:          cfg.Cache.TTL,
			StaleIfError: cfg.Cache.StaleIfError,
			ReplicaLease: cfg.Cache.ReplicaLease,
			Scope:        cfg.Cache.Scope,
			TTLByRoute:   ttlByRoute,
		},
		Verify:                cfg.Upstream.Verify,
		VerifyPath:            cfg.Upstream.VerifyPath,
		AuthTTL:               cfg.Auth.TTL,
		MaxUserFailures:       cfg.Auth.MaxUserFailures,
		MaxIPFailures:         cfg.Auth.MaxIPFailures,
		MaxUserFailuresAllIPs: cfg.Auth.MaxUserFailuresAllIPs,
		FailureWindow:         cfg.Auth.FailureWindow,
		MaxInflightPerAccount: cfg.Upstream.MaxInflightPerAccount,
		KnownAddressTTL:       cfg.Auth.KnownAddressTTL,
		MaxLoginDelay:         cfg.Auth.MaxLoginDelay,
		MaxDelayedLogins:      cfg.Auth.MaxDelayedLogins,
		RejectStatus:          cfg.RateLimit.RejectStatus,
		TopAccounts:           cfg.Metrics.TopAccounts,
		RedisNamespace:        cfg.Redis.Namespace,
		CORSOrigins:           cfg.CORS.AllowedOrigins,
	}, nil
}

// LiveFrom maps the settings of the configuration that a serving gateway takes on a reload (Reconfigure),
// without the limiter, which the caller builds with the counts of the one in force.
func LiveFrom(cfg *config.Config) (Live, error) {
	proxies, err := cfg.Server.TrustedNetworks()
	if err != nil {
		return Live{}, err
	}
	return Live{
		TrustedProxies:    proxies,
		CORSOrigins:       cfg.CORS.AllowedOrigins,
		CacheTTL:          cfg.Cache.TTL,
		CacheStaleIfError: cfg.Cache.StaleIfError,
	}, nil
}
