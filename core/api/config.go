package api

import "github.com/reqgate/reqgate/config"

// OptionsFrom maps the resolved configuration to the core's options: server.max_body_bytes, auth.ttl,
// core.schema_ttl, core.auth_proof and server.trusted_proxies. It is the one mapping, used by cmd/reqgate and by the tests
// alike. What is no configuration key stays zero for the caller to set: the logger and the clock.
func OptionsFrom(cfg *config.Config) (Options, error) {
	proxies, err := cfg.Server.TrustedNetworks()
	if err != nil {
		return Options{}, err
	}
	return Options{
		MaxBodyBytes:   cfg.Server.MaxBodyBytes,
		AuthTTL:        cfg.Auth.TTL,
		SchemaTTL:      cfg.Core.SchemaTTL,
		TrustedProxies: proxies,
		NoAuthProof:    !cfg.Core.AuthProof,
	}, nil
}
