package gateway

import (
	"net/netip"
	"time"
)

// live are the settings a reload may change while the gateway serves (Reconfigure). A request reads one
// snapshot as it starts and keeps it, so it sees the old settings or the new ones, never a mix; swapping the
// snapshot touches no connection.
type live struct {
	corsOrigins map[string]bool // nil: no CORS headers
	proxies     []netip.Prefix  // trusted proxy networks
	limiter     Limiter         // nil: no rate limits
}

// Live are the options of a running gateway that Reconfigure changes; they mean what the fields of the
// same names in Options mean.
type Live struct {
	TrustedProxies []netip.Prefix
	CORSOrigins    []string
	Limiter        Limiter
	// CacheTTL and CacheStaleIfError are CacheOptions.TTL and StaleIfError; without a cache they are ignored.
	CacheTTL, CacheStaleIfError time.Duration
}

// newLive checks and converts the live options.
func newLive(proxies []netip.Prefix, corsOrigins []string, limiter Limiter) (*live, error) {
	s := &live{proxies: proxies, limiter: limiter}
	if len(corsOrigins) > 0 {
		s.corsOrigins = make(map[string]bool, len(corsOrigins))
		for _, o := range corsOrigins {
			s.corsOrigins[o] = true
		}
	}
	return s, nil
}

// Reconfigure replaces the live options of a serving gateway, for a reloaded configuration: requests that
// start afterwards use them; requests in flight finish under the old ones; open connections stay open.
// The trusted proxies also decide, from then on, which new connections are exempt from the per-IP
// connection limit. Invalid options are refused and change nothing.
func (g *Gateway) Reconfigure(l Live) error {
	s, err := newLive(l.TrustedProxies, l.CORSOrigins, l.Limiter)
	if err != nil {
		return err
	}
	if g.cache != nil {
		if err := g.cache.SetTTL(l.CacheTTL, l.CacheStaleIfError); err != nil {
			return err
		}
	}
	g.live.Store(s)
	return nil
}

// trustedProxies are the trusted proxy networks in force.
func (g *Gateway) trustedProxies() []netip.Prefix { return g.live.Load().proxies }
