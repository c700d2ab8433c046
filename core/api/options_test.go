package api

import (
	"testing"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/core"
)

// configured are the options cmd/reqgate gives the core under the default configuration (OptionsFrom).
func configured() Options {
	o, err := OptionsFrom(config.Default(config.RoleCore))
	if err != nil {
		panic(err) // the default configuration is valid
	}
	return o
}

// TestNewRefuses checks that New refuses what no configuration can mean instead of putting a default in its
// place, and takes 0 as "never" for both caches.
func TestNewRefuses(t *testing.T) {
	configtest.CheckNew(t, configured, func(o Options) error {
		_, err := New(nil, o)
		return err
	}, []configtest.Edit[Options]{
		configtest.Accepted("configured", func(*Options) {}),
		configtest.Accepted("caches off", func(o *Options) { o.AuthTTL, o.SchemaTTL = 0, 0 }),
		configtest.Refused("zero body", func(o *Options) { o.MaxBodyBytes = 0 }, "max body bytes 0"),
		configtest.Refused("negative auth ttl", func(o *Options) { o.AuthTTL = -1 }, "auth ttl"),
		configtest.Refused("negative schema ttl", func(o *Options) { o.SchemaTTL = -1 }, "schema ttl"),
	})
}

// mustNew is New with the fields opt sets over the default configuration's options.
func mustNew(tb testing.TB, st core.Store, opt Options) *Server {
	tb.Helper()
	s, err := New(st, configtest.Overlay(configured(), opt))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
