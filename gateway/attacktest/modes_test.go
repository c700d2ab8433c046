package attacktest

import (
	"testing"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/gatewaytest"
)

// mode is a way the gateway verifies a credential (upstream.verify), with the core as the upstream of that
// kind: reqgate's own core, which proves what it authenticated, or the core without its proof header
// (core.auth_proof: false), standing in for any other implementation of the interface.
type mode struct {
	verify string
	proof  bool
}

var modes = []mode{{config.VerifyProof, true}, {config.VerifyProbe, false}}

// inModes runs a credential attack once per mode: what the gateway promises of credentials holds in both.
func inModes(t *testing.T, attack func(t *testing.T, m mode)) {
	for _, m := range modes {
		t.Run(m.verify, func(t *testing.T) { attack(t, m) })
	}
}

// start runs the core of the mode with opt.
func (m mode) start(tb testing.TB, opt coretest.Options) *coretest.Core {
	opt.API.NoAuthProof = !m.proof
	return coretest.Start(tb, opt)
}

// with is gatewaytest.With in the mode.
func (m mode) with(opt gateway.Options) gateway.Options {
	opt.Verify = m.verify
	return gatewaytest.With(opt)
}

// cached is cached in the mode.
func (m mode) cached(c *coretest.Core) gateway.Options {
	o := cached(c)
	o.Verify = m.verify
	return o
}
