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
// (core.auth_proof: false), standing in for any other implementation of the interface, which is reached
// over HTTPS as a hosted service is (tls_test.go).
type mode struct {
	name   string
	verify string
	proof  bool
	tls    bool       // the core serves HTTPS only, with a certificate of a test CA the gateway verifies
	ca     upstreamCA // the test CA of a tls mode, made anew for each test (inModes)
}

var modes = []mode{
	{name: "proof", verify: config.VerifyProof, proof: true},
	{name: "probe_over_https", verify: config.VerifyProbe, tls: true},
}

// inModes runs a credential attack once per mode: what the gateway promises of credentials holds in both.
func inModes(t *testing.T, attack func(t *testing.T, m mode)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			if m.tls {
				m.ca = newUpstreamCA(t)
			}
			attack(t, m)
		})
	}
}

// start runs the core of the mode with opt.
func (m mode) start(tb testing.TB, opt coretest.Options) *coretest.Core {
	opt.API.NoAuthProof = !m.proof
	if m.tls {
		opt.TLS = m.ca.serverConfig(tb)
	}
	return coretest.Start(tb, opt)
}

// with is gatewaytest.With in the mode.
func (m mode) with(opt gateway.Options) gateway.Options {
	opt.Verify = m.verify
	if m.tls {
		m.ca.upstream(&opt)
	}
	return gatewaytest.With(opt)
}

// cached is cached in the mode.
func (m mode) cached(c *coretest.Core) gateway.Options {
	o := cached(c)
	o.Verify = m.verify
	if m.tls {
		m.ca.upstream(&o)
	}
	return o
}
