package api

import (
	"strings"
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
	tests := []struct {
		name    string
		edit    func(*Options)
		wantErr string // "" = accepted
	}{
		{"configured", func(*Options) {}, ""},
		{"caches off", func(o *Options) { o.AuthTTL, o.SchemaTTL = 0, 0 }, ""},
		{"zero body", func(o *Options) { o.MaxBodyBytes = 0 }, "max body bytes 0"},
		{"negative auth ttl", func(o *Options) { o.AuthTTL = -1 }, "auth ttl"},
		{"negative schema ttl", func(o *Options) { o.SchemaTTL = -1 }, "schema ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := configured()
			tt.edit(&o)
			_, err := New(nil, o)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
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
