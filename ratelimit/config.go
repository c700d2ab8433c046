package ratelimit

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/config"
)

// OptionsFrom maps the resolved configuration to the limiter's options: the ratelimit section, its policies and
// overrides, and redis.namespace. It is the one mapping, used by cmd/reqgate and by the tests alike. What is no
// configuration key stays zero for the caller to set: the Redis client and the logger.
func OptionsFrom(cfg *config.Config) Options {
	rl := cfg.RateLimit
	o := Options{
		RedisNamespace: cfg.Redis.Namespace,
		OnRedisError:   rl.OnRedisError,
		RedisTimeout:   rl.RedisTimeout,
		RedisBackoff:   rl.RedisBackoff,
		RedisFailures:  rl.RedisFailures,
		LocalReplicas:  rl.LocalReplicas,
		MaxHeld:        rl.MaxHeld,
		RejectStatus:   rl.RejectStatus,
	}
	for _, p := range rl.Policies {
		o.Policies = append(o.Policies, Policy{Name: p.Name, Key: p.Key, Limit: p.Limit, Period: p.Period,
			Burst: p.Burst, MaxDelay: p.MaxDelay, Algorithm: p.Algorithm, Block: p.Block})
	}
	for _, v := range rl.Overrides {
		o.Overrides = append(o.Overrides, Override{APIKey: v.APIKey, Policy: v.Policy, Limit: v.Limit,
			Period: v.Period, Burst: v.Burst})
	}
	return o
}

// RedisOptionsFrom are the options of the Redis client of redis.url (with the password of redis.password_file)
// and redis.timeout: RedisOptions, for the limiter, the invalidation bus and the core's publisher alike.
func RedisOptionsFrom(cfg *config.Config) (*redis.Options, error) {
	u, err := cfg.RedisURL()
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	o, err := RedisOptions(u, cfg.Redis.Timeout)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	return o, nil
}
