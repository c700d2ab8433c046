package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway/accesslog"
)

// part is one running piece of the process: the core's HTTP server or the gateway.
type part interface {
	// ready reports whether the part can serve (store open, upstream and Redis answering).
	ready(ctx context.Context) error
	// shutdown stops accepting, lets requests in flight finish until ctx ends, then releases resources.
	shutdown(ctx context.Context) error
}

// listeners are the sockets of a role, bound before anything else happens.
type listeners struct {
	public net.Listener // the gateway's (serve, gateway) or the core's (core)
	core   net.Listener // the core's internal loopback listener of serve
	admin  net.Listener // nil when the admin listener is off
}

// bind opens every listener of cfg.Role. A port in use thus fails the start before a store is opened, migrated
// or provisioned, and leaves nothing behind.
func bind(cfg *config.Config) (*listeners, error) {
	l := &listeners{}
	var err error
	if l.public, err = listen(cfg.Listen); err != nil {
		return nil, err
	}
	if cfg.Role == config.RoleServe {
		// The core listens on an internal loopback port; only the gateway is public.
		if l.core, err = listen("127.0.0.1:0"); err != nil {
			l.close()
			return nil, err
		}
	}
	if cfg.AdminListen != config.Off && cfg.AdminListen != "" {
		if l.admin, err = listen(cfg.AdminListen); err != nil {
			l.close()
			return nil, fmt.Errorf("admin: %w", err)
		}
	}
	return l, nil
}

// close closes the listeners no server has taken over yet.
func (l *listeners) close() {
	for _, ln := range []net.Listener{l.public, l.core, l.admin} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// readiness is what /readyz of the admin listener asks: the parts started so far, once start-up has finished.
type readiness struct {
	mu      sync.Mutex
	parts   []part
	started bool
}

func (r *readiness) add(p part) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts = append(r.parts, p)
}

func (r *readiness) done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = true
}

// all returns the parts started so far.
func (r *readiness) all() []part {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]part(nil), r.parts...)
}

// ready reports the first part that is not ready, leaving out the failures excluded reports (nil: none);
// until start-up has finished, the process is not ready even when its parts answer (a core still applies its
// account files).
func (r *readiness) ready(ctx context.Context, excluded func(error) bool) error {
	r.mu.Lock()
	parts, started := append([]part(nil), r.parts...), r.started
	r.mu.Unlock()
	for _, p := range parts {
		if err := p.ready(ctx); err != nil && (excluded == nil || !excluded(err)) {
			return err
		}
	}
	if !started {
		return errors.New("starting")
	}
	return nil
}

// runRole binds the listeners of cfg.Role, starts the admin listener at once (so /healthz answers and /readyz
// says 503 while the store is reached and the account files are applied), starts the parts, serves until ctx
// is cancelled or a server fails, reloading the configuration on every signal from hup (reload.go), then shuts
// the parts down in order: the gateway first (no new requests reach the core), then the core and its store.
func runRole(ctx context.Context, cfg *config.Config, rl *reloader, hup <-chan os.Signal, access *accesslog.Logger, stdout io.Writer) error {
	log := rl.log
	lns, err := bind(cfg)
	if err != nil {
		return err
	}
	tr := startTracing(cfg, log)
	errc := make(chan error, 4)
	var parts []part // in shutdown order
	stopAll := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
		defer cancel()
		var err error
		for _, p := range parts {
			err = errors.Join(err, p.shutdown(sctx))
		}
		// Last, so the spans of the requests that finished during the shutdown are exported too; with time of
		// their own when the drain ran past the timeout (drain.go).
		fctx, fcancel := flushContext(sctx)
		defer fcancel()
		return errors.Join(err, tr.shutdown(fctx))
	}
	// fail stops what started, closes the listeners no server took over, and returns err; a start cut short by
	// a signal is a clean stop.
	fail := func(err error) error {
		lns.close()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			log.Info("shutting down", "reason", "signal during start-up")
			return stopAll()
		}
		return errors.Join(err, stopAll())
	}

	ready := &readiness{}
	var admin *adminNode
	if lns.admin != nil {
		if admin, err = startAdmin(lns.admin, ready, cfg, log, errc); err != nil {
			return fail(err)
		}
		lns.admin = nil
		log.Info("admin listening", "addr", admin.addr)
	}
	rp, err := startParts(cfg, log, access, lns, tr, errc)
	parts = rp.parts
	if err != nil {
		return fail(err)
	}
	for _, p := range parts {
		ready.add(p)
	}
	if admin != nil {
		parts = append(parts, admin) // last: /healthz answers until the end
	}
	if rp.core != nil {
		if err := rp.core.open(ctx, cfg, log); err != nil {
			return fail(err)
		}
	}
	ready.done()
	rl.attach(rp.gw, rp.core)
	rl.attachAdmin(admin)
	log.Info("reqgate started", "role", cfg.Role, "listen", rp.publicURL)
	if rp.core != nil && rp.core.demo {
		demoBanner(stdout, log, rp.publicURL)
	}
	err = rl.serveUntil(ctx, hup, errc)
	return errors.Join(err, stopAll())
}

// roleParts are the parts startParts started.
type roleParts struct {
	parts     []part       // in shutdown order, also when a start failed half-way
	gw        *gatewayNode // nil in the core role
	core      *coreNode    // nil in the gateway role
	publicURL string
}

// startParts starts the core and the gateway of cfg.Role on the listeners they take over from lns.
func startParts(cfg *config.Config, log *slog.Logger, access *accesslog.Logger, lns *listeners, tr *tracing, errc chan<- error) (*roleParts, error) {
	rp := &roleParts{}
	var err error
	switch cfg.Role {
	case config.RoleCore:
		rp.core = startCore(cfg, log, lns.public, tr, errc)
		lns.public = nil
		rp.parts = append(rp.parts, rp.core)
		rp.publicURL = "http://" + rp.core.addr
		if err := rp.core.connectBus(cfg); err != nil {
			return rp, err
		}
	case config.RoleGateway:
		if rp.gw, err = startGateway(cfg, log, access, lns.public, cfg.Upstream.URL, tr, errc); err != nil {
			return rp, err
		}
		lns.public = nil
		rp.parts = append(rp.parts, rp.gw)
		rp.publicURL = rp.gw.url()
	case config.RoleServe:
		rp.core = startCore(cfg, log, lns.core, tr, errc)
		lns.core = nil
		rp.parts = append(rp.parts, rp.core)
		if rp.gw, err = startGateway(cfg, log, access, lns.public, "http://"+rp.core.addr, tr, errc); err != nil {
			return rp, err
		}
		lns.public = nil
		rp.parts = append([]part{rp.gw}, rp.parts...)
		rp.publicURL = rp.gw.url()
		log.Info("core listening (internal)", "addr", rp.core.addr)
	}
	return rp, nil
}

// listen opens a TCP listener, naming the address in the error.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// readyTimeout bounds one readiness probe.
const readyTimeout = 2 * time.Second
