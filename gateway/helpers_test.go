package gateway

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// testGateway is a gateway serving on a real loopback port.
type testGateway struct {
	*Gateway
	URL string
}

// configured are the options cmd/reqgate gives the gateway under the default configuration (OptionsFrom), but
// with the cache off: a test turns it on (cachedOptions) where it is about the cache.
func configured() Options {
	o, err := OptionsFrom(config.Default(config.RoleGateway))
	if err != nil {
		panic(err) // the default configuration is valid
	}
	o.Cache.Enabled = false
	return o
}

// withConfig is opt with the fields it leaves zero taken from configured.
func withConfig(opt Options) Options { return configtest.Overlay(configured(), opt) }

// networks parses trusted proxy networks as cmd/reqgate does.
func networks(tb testing.TB, list ...string) []netip.Prefix {
	tb.Helper()
	p, err := config.ParseNetworks(list)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// startGateway runs a gateway with opt (over configured) on a free loopback port and shuts it down when the
// test ends.
func startGateway(tb testing.TB, opt Options) *testGateway {
	tb.Helper()
	g, addr := runGateway(tb, opt, (*Gateway).Serve)
	return &testGateway{Gateway: g, URL: "http://" + addr}
}

// startExact is startGateway with opt as it is, zero fields included (not over configured).
func startExact(tb testing.TB, opt Options) *testGateway {
	tb.Helper()
	g, addr := runExact(tb, opt, (*Gateway).Serve)
	return &testGateway{Gateway: g, URL: "http://" + addr}
}

// runGateway builds a gateway with opt (over configured), runs serve with it on a free loopback port and shuts
// it down when the test ends. It returns the gateway and the port's address.
func runGateway(tb testing.TB, opt Options, serve func(*Gateway, net.Listener) error) (*Gateway, string) {
	tb.Helper()
	return runExact(tb, withConfig(opt), serve)
}

// runExact is runGateway with opt as it is.
func runExact(tb testing.TB, opt Options, serve func(*Gateway, net.Listener) error) (*Gateway, string) {
	tb.Helper()
	g, err := New(opt)
	if err != nil {
		tb.Fatalf("gateway.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = serve(g, ln)
	}()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		// A Shutdown that came before serve had taken the listener did not close it: closing it here ends
		// that serve too, instead of leaving the test waiting for it until its timeout.
		_ = ln.Close()
		<-done
	})
	return g, ln.Addr().String()
}

// cachedOptions are gateway options with the cache on, in front of core.
func cachedOptions(c *coretest.Core) Options {
	opt := withConfig(Options{Upstreams: []string{c.URL}, Cache: CacheOptions{Enabled: true}})
	// With Redis: a lease that a replica starved of CPU by a loaded test machine does not lose between two
	// reads of a test.
	opt.Cache.ReplicaLease = 3 * time.Second
	return opt
}

// reply is a response read whole.
type reply = testsupport.Reply

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// do sends one request with Basic credentials (user "" sends none) and extra headers as "Key: value" (an
// empty value removes the header). It ends the test on a transport failure, so it is for the test's own
// goroutine; others use send.
func do(tb testing.TB, method, url, user, pass, body string, headers ...string) reply {
	tb.Helper()
	return testsupport.Do(tb, client, method, url, user, pass, body, headers...)
}

// send is do returning the transport failure, for any goroutine.
func send(method, url, user, pass, body string, headers ...string) (reply, error) {
	return testsupport.Send(client, method, url, user, pass, body, headers...)
}

// get is a GET as demo/demo.
func get(tb testing.TB, url string, headers ...string) reply {
	tb.Helper()
	return do(tb, http.MethodGet, url, "demo", "demo", "", headers...)
}

// parallel runs f n times at once and waits. f runs on goroutines of its own: it reports with t.Errorf,
// never t.Fatalf (see send).
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// TestNewRefuses checks that New refuses what no configuration can mean instead of putting a default in its
// place: a zero Options is refused, the default configuration's options are not.
func TestNewRefuses(t *testing.T) {
	configtest.CheckNew(t, configured, func(o Options) error {
		g, err := New(o)
		if err == nil {
			_ = g.Shutdown(t.Context())
		}
		return err
	}, []configtest.Edit[Options]{
		configtest.Accepted("configured", func(*Options) {}),
		configtest.Accepted("auth never", func(o *Options) { o.AuthTTL = 0 }),
		configtest.Refused("zero options", func(o *Options) { *o = Options{} }, "no upstream"),
		configtest.Refused("no upstream timeout", func(o *Options) { o.UpstreamTimeout = 0 }, "UpstreamTimeout"),
		configtest.Refused("budget below body", func(o *Options) { o.BodyBudget = int64(o.MaxBodyBytes) - 1 }, "BodyBudget"),
		configtest.Refused("no body share", func(o *Options) { o.BodyShare = 0 }, "BodyShare"),
		configtest.Refused("upload rate without grace", func(o *Options) { o.UploadGrace = 0 }, "UploadGrace"),
		configtest.Accepted("no upload rate", func(o *Options) { o.MinUploadRate, o.UploadGrace = 0, 0 }),
		configtest.Refused("negative auth ttl", func(o *Options) { o.AuthTTL = -1 }, "AuthTTL"),
		configtest.Refused("no scope", func(o *Options) { o.Cache.Scope = "" }, "cache scope"),
		configtest.Refused("negative health interval", func(o *Options) { o.HealthInterval = -1 }, "HealthInterval"),
		configtest.Refused("negative health timeout", func(o *Options) { o.HealthTimeout = -1 }, "HealthTimeout"),
		configtest.Accepted("no cap per account", func(o *Options) { o.MaxInflightPerAccount = 0 }),
		configtest.Refused("negative cap per account", func(o *Options) { o.MaxInflightPerAccount = -1 }, "MaxInflightPerAccount"),
		configtest.Accepted("redis namespace", func(o *Options) { o.RedisNamespace = "alpha" }),
		configtest.Refused("redis namespace with the separator", func(o *Options) { o.RedisNamespace = "a:b" }, "RedisNamespace"),
	})
}
