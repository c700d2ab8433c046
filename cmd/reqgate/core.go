package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/storemetrics"
	"github.com/reqgate/reqgate/core/storetracing"
)

// coreNode is the core service: its store and its HTTP server.
type coreNode struct {
	srv  *http.Server
	addr string
	api  atomic.Pointer[api.Server] // nil while starting

	mu    sync.Mutex
	store core.Store // measured (storemetrics), traced when tracing is on; nil until open has opened it
	raw   core.Store // the store itself, for what it offers beyond core.Store
	demo  bool       // the demo account was provisioned at this start

	tracer trace.Tracer // nil: tracing off

	// With redis.url in the core role: the gateways' invalidation bus, on which the core announces account
	// changes so that every gateway forgets the account's remembered credentials at once. Nil otherwise (in
	// serve, the gateway in the process does it on its own bus).
	rdb redis.UniversalClient
	bus *cache.Publisher
	log *slog.Logger

	inFlight atomic.Int64 // requests being served, for the log of a drain cut short
}

// startCore serves the core's HTTP interface on ln at once. Until open has opened the store and applied the
// account files, it answers /healthz 200 and everything else 503 (its /readyz too), so a long import or a store
// that is still unreachable does not look like a dead process. With tracing on, requests and store calls are
// traced.
func startCore(cfg *config.Config, log *slog.Logger, ln net.Listener, tr *tracing, errc chan<- error) *coreNode {
	n := &coreNode{addr: ln.Addr().String(), tracer: tr.tracer(coreScope), log: log}
	var h http.Handler = http.HandlerFunc(n.serveHTTP)
	if cfg.Role == config.RoleCore {
		// In serve the gateway's access log already has a line for every request, the core's included.
		h = requestLog(log.With("part", "core"), h)
	}
	h = traceHandler(n.tracer, h) // outermost: the request log finds the trace id
	n.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(cfg.Server.ReadTimeout, 10e9),
		ReadTimeout:       cfg.Server.ReadTimeout,
		WriteTimeout:      cfg.Server.WriteTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := n.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("core: %w", err)
		}
	}()
	return n
}

func (n *coreNode) serveHTTP(w http.ResponseWriter, r *http.Request) {
	n.inFlight.Add(1)
	defer n.inFlight.Add(-1)
	if s := n.api.Load(); s != nil {
		s.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.URL.Path == "/healthz" {
		fmt.Fprintln(w, "ok")
		return
	}
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintln(w, "starting")
}

// open opens the store (retrying an unreachable PostgreSQL for store.connect_timeout), applies the account
// files (and the demo account to an empty store when the role is serve), then serves the XML interface.
func (n *coreNode) open(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	opt, err := apiOptions(cfg, log)
	if err != nil {
		return err
	}
	dsn, err := cfg.StoreDSN()
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	raw, err := openStoreRetry(ctx, dsn, cfg.Store.ConnectTimeout, log)
	if err != nil {
		return err
	}
	var st core.Store = storemetrics.Wrap(raw)
	if n.tracer != nil {
		st = storetracing.Wrap(st, n.tracer)
	}
	n.mu.Lock()
	n.store, n.raw = st, raw
	n.mu.Unlock()
	if err := n.provision(ctx, cfg, log); err != nil {
		return err
	}
	srv, err := api.New(st, opt)
	if err != nil {
		return err
	}
	n.api.Store(srv)
	return nil
}

// apiOptions are the options of the core's XML interface, with the trusted proxies of the role.
//
// The core's trusted proxies are the networks whose X-Forwarded-Proto and X-Forwarded-Host it believes for
// Location. Under `serve` that is the gateway in the same process, on loopback, and nobody else reaches the
// core's internal port; the gateway's own trusted proxies are its business. Under `core` it is
// server.trusted_proxies: the gateways and proxies in front of the core. The gateway rewrites a Location that
// names the core's own address anyway, so a core that trusts no one still gives callers the right one through
// the gateway; a core reached directly through a proxy needs the proxy listed.
func apiOptions(cfg *config.Config, log *slog.Logger) (api.Options, error) {
	o, err := api.OptionsFrom(cfg)
	if err != nil {
		return api.Options{}, err
	}
	if cfg.Role == config.RoleServe {
		o.TrustedProxies = loopback
	}
	o.Logger = log.With("part", "core")
	return o, nil
}

// reconfigure serves the XML interface anew with cfg's trusted proxies and schema TTL (a reload): requests
// in flight finish on the old one, and the new one starts with nothing remembered.
func (n *coreNode) reconfigure(cfg *config.Config, log *slog.Logger) error {
	opt, err := apiOptions(cfg, log)
	if err != nil {
		return err
	}
	n.mu.Lock()
	st := n.store
	n.mu.Unlock()
	if st == nil || n.api.Load() == nil {
		return errors.New("core: still starting")
	}
	srv, err := api.New(st, opt)
	if err != nil {
		return err
	}
	n.api.Store(srv)
	return nil
}

// applyAccounts applies parsed account files to the open store (a reload), then forgets the credentials and
// schemas the core remembers, so a changed password or a user marked deleted counts from the next request.
func (n *coreNode) applyAccounts(ctx context.Context, p *core.Provision) error {
	n.mu.Lock()
	st := n.store
	n.mu.Unlock()
	if st == nil {
		return errors.New("core: store not open")
	}
	if err := st.Apply(ctx, p); err != nil {
		return fmt.Errorf("apply account files: %w", err)
	}
	n.purge("")
	return nil
}

// purge forgets what the core remembers of accounts (verified credentials, schemas): all of them, which costs
// a store read per account's next request, and makes a user locked out in the store lose access at once. With
// the bus (core role with redis.url), the gateways on it forget the account too.
func (n *coreNode) purge(account string) {
	if s := n.api.Load(); s != nil {
		s.FlushCaches()
	}
	if account != "" {
		n.announce(account)
	}
}

// announceTimeout bounds the publication of the purges of one reload or POST /purge, so that neither hangs on a
// Redis that does not answer (a reload holds up the signal loop, a shutdown included, while it runs).
const announceTimeout = 2 * time.Second

// announce tells the gateways on the bus to drop the accounts' cached reads and remembered credentials. Without
// the bus it does nothing: a gateway then keeps a remembered credential up to its auth.ttl. At the first failure
// it stops, since Redis is then unreachable, and logs the accounts it could not announce (the change itself is
// applied all the same); each of them counts in reqgate_core_purge_publish_errors_total.
func (n *coreNode) announce(accounts ...string) {
	if n.bus == nil || len(accounts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	for i, a := range accounts {
		if err := n.bus.Purge(ctx, a); err != nil {
			missed := accounts[i:]
			announceErrors.Add(len(missed))
			n.log.Warn("the gateways were not told of an account change: they keep remembered credentials up to "+
				"their auth.ttl, unless purged", "accounts", missed, "err", err)
			return
		}
	}
}

// connectBus connects the core role to the gateways' invalidation bus when a Redis is configured. The connection
// is lazy: a Redis that is down at start fails only the publications made while it is down.
func (n *coreNode) connectBus(cfg *config.Config) error {
	if cfg.Role != config.RoleCore || !cfg.Redis.Configured() {
		return nil
	}
	rdb, err := newRedis(cfg)
	if err != nil {
		return err
	}
	n.rdb = rdb
	n.bus = cache.NewPublisher(n.rdb, cfg.Redis.Namespace)
	return nil
}

// loopback are the networks of the gateway of `reqgate serve`, which reaches its core over loopback.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// barMinRecords is the number of seed records from which applying account files draws a bar on a terminal:
// below it the bar would only flash by at every start.
const barMinRecords = 1000

// applyAccountFiles applies the account files to st and logs a summary: the counts of what the files hold
// and the time taken. Seed records count as progress: a bar on stderr when it is a terminal and the files
// hold at least barMinRecords of them, otherwise a log line every few seconds.
func applyAccountFiles(ctx context.Context, st core.Store, files []string, stderr io.Writer, log *slog.Logger) error {
	p, err := accounts.LoadFiles(files...)
	if err != nil {
		return fmt.Errorf("account files: %w", err)
	}
	var users, objects, views, records, rels int
	for _, a := range p.Accounts {
		users += len(a.Users)
		objects += len(a.Objects)
		views += len(a.Views)
		records += len(a.Records)
		rels += len(a.Relationships)
	}
	pr := newProgressLog("apply", log, progressEvery)
	if records >= barMinRecords {
		pr = newProgress("apply", stderr, log)
	}
	pr.stage("apply account files", records)
	if err := st.Apply(core.WithProgress(ctx, pr.add), p); err != nil {
		pr.abort()
		return fmt.Errorf("apply account files: %w", err)
	}
	elapsed := pr.finish()
	log.Info("account files applied", "files", files, "accounts", len(p.Accounts), "users", users,
		"custom_objects", objects, "views", views, "records", records, "relationships", rels,
		"elapsed", elapsed.Round(time.Millisecond).String())
	return nil
}

// provision applies --accounts files, then gives an empty store the demo account when running `serve`.
func (n *coreNode) provision(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	if len(cfg.Accounts) > 0 {
		if err := applyAccountFiles(ctx, n.store, cfg.Accounts, os.Stderr, log); err != nil {
			return err
		}
	}
	if cfg.Role != config.RoleServe {
		return nil
	}
	// Replicas of `serve` starting together on one empty PostgreSQL database must not both provision the
	// demo: a store that can run a step exclusively (core/postgres) serialises the check and the writes.
	if ex, ok := n.raw.(exclusiveStore); ok {
		return ex.Exclusive(ctx, func(ctx context.Context) error { return n.provisionDemo(ctx, log) })
	}
	return n.provisionDemo(ctx, log)
}

// exclusiveStore is a store that can run a step while no other process runs one (an advisory lock).
type exclusiveStore interface {
	Exclusive(ctx context.Context, fn func(context.Context) error) error
}

// provisionDemo gives an empty store the demo account and its field history.
func (n *coreNode) provisionDemo(ctx context.Context, log *slog.Logger) error {
	empty, err := n.store.Empty(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if !empty {
		return nil
	}
	if err := n.store.Apply(ctx, accounts.Demo()); err != nil {
		return fmt.Errorf("provision the demo account: %w", err)
	}
	if err := accounts.SeedDemoHistory(ctx, n.store); err != nil {
		return fmt.Errorf("seed the demo history: %w", err)
	}
	n.demo = true
	log.Info("empty store: demo account provisioned", "api_key", "demo")
	return nil
}

func (n *coreNode) ready(ctx context.Context) error {
	n.mu.Lock()
	st := n.store
	n.mu.Unlock()
	switch {
	case st == nil:
		return errors.New("core starting: store not open yet")
	case n.api.Load() == nil:
		return errors.New("core starting: applying account files")
	}
	if err := st.Ping(ctx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// shutdown lets requests in flight finish, then closes the store cleanly.
func (n *coreNode) shutdown(ctx context.Context) error {
	err := n.srv.Shutdown(ctx)
	if drainCut(ctx, err) {
		// Closing the connections cancels the requests' contexts, so their store calls end before the store
		// closes, which waits for them.
		logCut(n.log, "core", err, "requests", n.inFlight.Load())
		_ = n.srv.Close()
		err = nil
	}
	n.mu.Lock()
	st := n.store
	n.mu.Unlock()
	if st != nil {
		if cerr := st.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
		}
	}
	if n.rdb != nil {
		_ = n.rdb.Close()
	}
	return err
}
