package api

import (
	"testing"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
)

// TestOptionsFrom checks that every configuration key of the core's interface reaches it through OptionsFrom,
// the one mapping of the binary and of the tests: with every key set, a field left zero is a key the core would
// silently ignore. The fields that are no configuration key are named here.
func TestOptionsFrom(t *testing.T) {
	cfg := config.Default(config.RoleCore)
	cfg.Server.TrustedProxies = []string{"10.0.0.0/8"}
	cfg.Core.AuthProof = false // its default maps to the zero NoAuthProof
	o, err := OptionsFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if unset := configtest.ZeroFields(o, "Logger", "Now"); len(unset) > 0 {
		t.Errorf("OptionsFrom leaves %v zero", unset)
	}
	cfg.Server.TrustedProxies = []string{"10.0.0.0/33"}
	if _, err := OptionsFrom(cfg); err == nil {
		t.Error("OptionsFrom accepts a bad trusted proxy network")
	}
}
