// Package gatewaytest gives tests outside package gateway the gateway options of the default configuration
// (the gateway takes complete, resolved values: package config alone holds their defaults, and a test states
// only what it changes), and a gateway serving on loopback.
package gatewaytest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/gateway"
)

// Options are the options cmd/reqgate gives the gateway under the default configuration (gateway.OptionsFrom),
// but with the cache off and no health probes of several cores: a test about either turns it on.
func Options() gateway.Options {
	o, err := gateway.OptionsFrom(config.Default(config.RoleGateway))
	if err != nil {
		panic(err) // the default configuration is valid
	}
	o.Cache.Enabled = false
	return o
}

// With is opt with the fields it leaves zero taken from Options.
func With(opt gateway.Options) gateway.Options { return configtest.Overlay(Options(), opt) }

// Serve runs a gateway with opt (complete options: With fills what a test leaves zero) on a free port of
// 127.0.0.1 until the test ends, when it is shut down; it returns the gateway and its URL (http://host:port).
func Serve(tb testing.TB, opt gateway.Options) (*gateway.Gateway, string) {
	tb.Helper()
	g, err := gateway.New(opt)
	if err != nil {
		tb.Fatalf("gateway.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = g.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		<-done
	})
	return g, "http://" + ln.Addr().String()
}
