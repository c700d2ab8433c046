package gateway

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/gateway/certs/certstest"
)

// everyKeySet is the default configuration of a gateway with the keys whose default is empty set too, so that
// every configured value of the gateway is not zero.
func everyKeySet(tb testing.TB) *config.Config {
	tb.Helper()
	cfg := config.Default(config.RoleGateway)
	dir := tb.TempDir()
	ca, client := certstest.Write(tb, dir, "ca"), certstest.Write(tb, dir, "client")
	cfg.Upstream.URL = "https://127.0.0.1:8443"
	cfg.Upstream.Host = "api.example"
	cfg.Upstream.TLS = config.UpstreamTLS{ServerName: "localhost", CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}
	cfg.Server.TrustedProxies = []string{"10.0.0.0/8"}
	cfg.CORS.AllowedOrigins = []string{"https://app.example"}
	cfg.Redis.Namespace = "alpha"
	cfg.Cache.TTLByRoute = []string{"record=10s"}
	return cfg
}

// TestOptionsFrom checks that every configuration key of the gateway reaches it through OptionsFrom and LiveFrom,
// the one mapping of the binary and of the tests: with every key set, a field left zero is a key the gateway
// would silently ignore. The fields that are no configuration key are named here; a new option that is one is
// mapped in OptionsFrom (and, if a reload changes it, in LiveFrom).
func TestOptionsFrom(t *testing.T) {
	cfg := everyKeySet(t)
	t.Run("options", func(t *testing.T) {
		o, err := OptionsFrom(cfg)
		if err != nil {
			t.Fatal(err)
		}
		unset := configtest.ZeroFields(o, "HealthInterval", "HealthTimeout", "MaxFailureKeys", "MaxKnownUsers",
			"FailureStoreTimeout", "Redis", "Limiter", "Logger", "AccessLog", "Tracer", "Now")
		if len(unset) > 0 {
			t.Errorf("OptionsFrom leaves %v zero", unset)
		}
		if want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}; !reflect.DeepEqual(o.TrustedProxies, want) {
			t.Errorf("TrustedProxies = %v, want %v", o.TrustedProxies, want)
		}
		if !reflect.DeepEqual(o.Upstreams, cfg.Upstream.URLs()) || o.RedisNamespace != "alpha" {
			t.Errorf("Upstreams = %v, RedisNamespace = %q", o.Upstreams, o.RedisNamespace)
		}
		g, err := New(o)
		if err != nil {
			t.Fatalf("New(OptionsFrom(config)): %v", err)
		}
		_ = g.Shutdown(t.Context())
	})
	t.Run("live", func(t *testing.T) {
		l, err := LiveFrom(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if unset := configtest.ZeroFields(l, "Limiter"); len(unset) > 0 {
			t.Errorf("LiveFrom leaves %v zero", unset)
		}
	})
	t.Run("bad network", func(t *testing.T) {
		bad := everyKeySet(t)
		bad.Server.TrustedProxies = []string{"10.0.0.0/33"}
		if _, err := OptionsFrom(bad); err == nil || !strings.Contains(err.Error(), "server.trusted_proxies") {
			t.Errorf("OptionsFrom: %v, want an error naming server.trusted_proxies", err)
		}
		if _, err := LiveFrom(bad); err == nil || !strings.Contains(err.Error(), "server.trusted_proxies") {
			t.Errorf("LiveFrom: %v, want an error naming server.trusted_proxies", err)
		}
	})
}
