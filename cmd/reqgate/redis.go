package main

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/ratelimit"
)

// newRedis connects to the Redis of cfg (nil when none is configured): one node (redis.url), the master of a
// Sentinel group (redis.sentinel), which the client asks the Sentinels for and follows through failovers, or a
// Redis Cluster (redis.cluster). Every kind gets the limiter's options (deadlines from the context, one retry)
// and redis.timeout as its dial, read and write timeout (for redis.url, those its URL does not set:
// ratelimit.RedisOptionsFrom). The connections are lazy: a
// Redis down at start fails only the calls made while it is down.
func newRedis(cfg *config.Config) (redis.UniversalClient, error) {
	r := cfg.Redis
	if !r.Configured() {
		return nil, nil
	}
	if r.URL != "" {
		opt, err := ratelimit.RedisOptionsFrom(cfg)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(opt), nil
	}
	password, sentinelPassword := "", ""
	var err error
	if r.PasswordFile != "" {
		if password, err = config.ReadSecret(r.PasswordFile); err != nil {
			return nil, fmt.Errorf("redis.password_file: %w", err)
		}
	}
	if r.Sentinel.PasswordFile != "" {
		if sentinelPassword, err = config.ReadSecret(r.Sentinel.PasswordFile); err != nil {
			return nil, fmt.Errorf("redis.sentinel.password_file: %w", err)
		}
	}
	if len(r.Sentinel.Addrs) > 0 {
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: r.Sentinel.Master, SentinelAddrs: r.Sentinel.Addrs, SentinelPassword: sentinelPassword,
			Password: password, ContextTimeoutEnabled: true, MaxRetries: 1,
			DialTimeout: r.Timeout, ReadTimeout: r.Timeout, WriteTimeout: r.Timeout,
		}), nil
	}
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: r.Cluster.Addrs, Password: password, ContextTimeoutEnabled: true, MaxRetries: 1,
		DialTimeout: r.Timeout, ReadTimeout: r.Timeout, WriteTimeout: r.Timeout,
	}), nil
}
