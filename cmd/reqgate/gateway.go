package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/ratelimit"
)

// gatewayNode is the gateway with its Redis client (when --redis is set).
type gatewayNode struct {
	gw   *gateway.Gateway
	rdb  *redis.Client
	addr string
}

// purge drops an account's cached reads and remembered credentials on every gateway replica.
func (n *gatewayNode) purge(account string) { n.gw.Purge(account) }

// startGateway builds the limiter and the gateway from cfg and serves on ln in front of upstream (one URL or a
// comma-separated list), traced by tr (nil: off). The caller keeps ln when it fails.
func startGateway(cfg *config.Config, log *slog.Logger, access *accesslog.Logger, ln net.Listener, upstream string, tr *tracing, errc chan<- error) (*gatewayNode, error) {
	n := &gatewayNode{}
	if cfg.Redis.URL != "" {
		opt, err := ratelimit.RedisOptions(cfg.Redis.URL)
		if err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = cfg.Redis.Timeout, cfg.Redis.Timeout, cfg.Redis.Timeout
		n.rdb = redis.NewClient(opt)
	}
	var limiter gateway.Limiter
	if len(cfg.RateLimit.Policies) > 0 {
		l, err := ratelimit.New(limiterOptions(cfg, n.rdb, log))
		if err != nil {
			n.closeRedis()
			return nil, fmt.Errorf("ratelimit: %w", err)
		}
		limiter = l
	}
	urls := config.Upstream{URL: upstream}.URLs()
	if len(urls) == 0 {
		n.closeRedis()
		return nil, errors.New("gateway: no upstream URL")
	}
	gw, err := gateway.New(gateway.Options{
		Upstreams:        urls,
		UpstreamTimeout:  cfg.Upstream.Timeout,
		MaxIdleConns:     cfg.Upstream.MaxIdleConns,
		MaxConnWait:      cfg.Upstream.MaxConnWait,
		MaxBodyBytes:     int(cfg.Server.MaxBodyBytes),
		BodyBudget:       cfg.Server.BodyBudget,
		MaxConns:         cfg.Server.MaxConns,
		MaxConnsPerIP:    cfg.Server.MaxConnsPerIP,
		MaxResponseBytes: int(cfg.Upstream.MaxResponseBytes),
		ReadTimeout:      cfg.Server.ReadTimeout,
		WriteTimeout:     cfg.Server.WriteTimeout,
		IdleTimeout:      cfg.Server.IdleTimeout,
		TrustedProxies:   cfg.Server.TrustedProxies,
		Cache: gateway.CacheOptions{
			Enabled:      cfg.Cache.Enabled,
			MaxBytes:     cfg.Cache.MaxBytes,
			TTL:          cfg.Cache.TTL,
			StaleIfError: never(cfg.Cache.StaleIfError),
			Scope:        cfg.Cache.Scope,
		},
		AuthTTL:               never(cfg.Auth.TTL),
		MaxUserFailures:       cfg.Auth.MaxUserFailures,
		MaxIPFailures:         cfg.Auth.MaxIPFailures,
		MaxUserFailuresAllIPs: cfg.Auth.MaxUserFailuresAllIPs,
		FailureWindow:         cfg.Auth.FailureWindow,
		Redis:                 n.rdb,
		Limiter:               limiter,
		CORSOrigins:           cfg.CORS.AllowedOrigins,
		Logger:                log.With("part", "gateway"),
		AccessLog:             access,
		Tracer:                tr.tracer(gatewayScope),
	})
	if err != nil {
		n.closeRedis()
		return nil, err
	}
	n.gw = gw
	n.addr = ln.Addr().String()
	go func() {
		if err := gw.Serve(ln); err != nil {
			errc <- err
		}
	}()
	return n, nil
}

// limiterOptions converts the ratelimit section of the configuration.
func limiterOptions(cfg *config.Config, rdb *redis.Client, log *slog.Logger) ratelimit.Options {
	rl := cfg.RateLimit
	o := ratelimit.Options{
		Redis:         rdb,
		OnRedisError:  rl.OnRedisError,
		RedisTimeout:  rl.RedisTimeout,
		RedisBackoff:  rl.RedisBackoff,
		LocalReplicas: rl.LocalReplicas,
		MaxHeld:       rl.MaxHeld,
		RejectStatus:  rl.RejectStatus,
		Logger:        log.With("part", "ratelimit"),
	}
	for _, p := range rl.Policies {
		o.Policies = append(o.Policies, ratelimit.Policy{Name: p.Name, Key: p.Key, Limit: p.Limit,
			Period: p.Period, Burst: p.Burst, MaxDelay: p.MaxDelay})
	}
	for _, v := range rl.Overrides {
		o.Overrides = append(o.Overrides, ratelimit.Override{APIKey: v.APIKey, Policy: v.Policy, Limit: v.Limit,
			Period: v.Period, Burst: v.Burst})
	}
	return o
}

// never maps a duration whose 0 means "never" in the configuration to the negative value that means
// "never" in the gateway and core options, where 0 means "the default".
func never(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// ready checks what the gateway's /readyz checks: the upstream core and, when configured, Redis.
func (n *gatewayNode) ready(context.Context) error { return n.gw.Ready() }

func (n *gatewayNode) shutdown(ctx context.Context) error {
	err := n.gw.Shutdown(ctx)
	n.closeRedis()
	return err
}

func (n *gatewayNode) closeRedis() {
	if n.rdb != nil {
		_ = n.rdb.Close()
	}
}
