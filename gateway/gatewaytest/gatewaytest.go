// Package gatewaytest gives tests outside package gateway the gateway options of the default configuration:
// the gateway takes complete, resolved values (package config alone holds their defaults), and a test states
// only what it changes.
package gatewaytest

import (
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
