// Package ratelimittest gives tests outside package ratelimit the limiter options of the default
// configuration: the limiter takes complete, resolved values (package config alone holds their defaults),
// and a test states only what it changes.
package ratelimittest

import (
	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/ratelimit"
)

// Options are the options cmd/reqgate gives the limiter under the default configuration, with policies.
func Options(policies ...ratelimit.Policy) ratelimit.Options {
	rl := config.Default(config.RoleGateway).RateLimit
	return ratelimit.Options{Policies: policies, OnRedisError: rl.OnRedisError, RedisTimeout: rl.RedisTimeout,
		RedisBackoff: rl.RedisBackoff, RedisFailures: rl.RedisFailures, LocalReplicas: rl.LocalReplicas, MaxHeld: rl.MaxHeld, RejectStatus: rl.RejectStatus}
}

// With is opt with the fields it leaves zero taken from Options.
func With(opt ratelimit.Options) ratelimit.Options { return configtest.Overlay(Options(), opt) }
