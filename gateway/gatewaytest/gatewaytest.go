// Package gatewaytest gives tests outside package gateway the gateway options of the default configuration:
// the gateway takes complete, resolved values (package config alone holds their defaults), and a test states
// only what it changes.
package gatewaytest

import (
	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/gateway"
)

// Options are the options cmd/reqgate gives the gateway under the default configuration, but with the cache
// off and no health probes of several cores: a test about either turns it on.
func Options() gateway.Options {
	c := config.Default(config.RoleGateway)
	return gateway.Options{
		Upstreams:        c.Upstream.URLs(),
		UpstreamTimeout:  c.Upstream.Timeout,
		SlowStart:        c.Upstream.SlowStart,
		QueueTimeout:     c.Upstream.QueueTimeout,
		MaxIdleConns:     c.Upstream.MaxIdleConns,
		MaxConnWait:      c.Upstream.MaxConnWait,
		MaxBodyBytes:     int(c.Server.MaxBodyBytes),
		BodyBudget:       c.Server.BodyBudget,
		BodyShare:        c.Server.BodyShare,
		MinUploadRate:    c.Server.MinUploadRate,
		UploadGrace:      c.Server.UploadGrace,
		MaxConns:         c.Server.MaxConns,
		MaxConnsPerIP:    c.Server.MaxConnsPerIP,
		MaxResponseBytes: int(c.Upstream.MaxResponseBytes),
		ReadTimeout:      c.Server.ReadTimeout,
		WriteTimeout:     c.Server.WriteTimeout,
		IdleTimeout:      c.Server.IdleTimeout,
		Cache: gateway.CacheOptions{MaxBytes: c.Cache.MaxBytes, TTL: c.Cache.TTL, StaleIfError: c.Cache.StaleIfError,
			Scope: c.Cache.Scope},
		AuthTTL:               c.Auth.TTL,
		MaxUserFailures:       c.Auth.MaxUserFailures,
		MaxIPFailures:         c.Auth.MaxIPFailures,
		MaxUserFailuresAllIPs: c.Auth.MaxUserFailuresAllIPs,
		FailureWindow:         c.Auth.FailureWindow,
		MaxInflightPerAccount: c.Upstream.MaxInflightPerAccount,
		KnownAddressTTL:       c.Auth.KnownAddressTTL,
		MaxLoginDelay:         c.Auth.MaxLoginDelay,
		MaxDelayedLogins:      c.Auth.MaxDelayedLogins,
		RejectStatus:          c.RateLimit.RejectStatus,
		TopAccounts:           c.Metrics.TopAccounts,
	}
}

// With is opt with the fields it leaves zero taken from Options.
func With(opt gateway.Options) gateway.Options { return configtest.Overlay(Options(), opt) }
