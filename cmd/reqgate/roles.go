package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
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

// runRole starts the parts of cfg.Role, serves until ctx is cancelled or a server fails, then shuts the
// parts down in order: the gateway first (no new requests reach the core), then the core and its store.
func runRole(ctx context.Context, cfg *config.Config, log *slog.Logger, access *accesslog.Logger, stdout io.Writer) error {
	errc := make(chan error, 4)
	var parts []part // in shutdown order
	stopAll := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
		defer cancel()
		var err error
		for _, p := range parts {
			err = errors.Join(err, p.shutdown(sctx))
		}
		return err
	}

	var publicURL string
	switch cfg.Role {
	case config.RoleCore:
		c, err := startCore(ctx, cfg, log, cfg.Listen, errc)
		if err != nil {
			return err
		}
		parts = append(parts, c)
		publicURL = "http://" + c.addr
	case config.RoleGateway:
		g, err := startGateway(cfg, log, access, cfg.Listen, cfg.Upstream.URL, errc)
		if err != nil {
			return err
		}
		parts = append(parts, g)
		publicURL = "http://" + g.addr
	case config.RoleServe:
		// The core listens on an internal loopback port; only the gateway is public.
		c, err := startCore(ctx, cfg, log, "127.0.0.1:0", errc)
		if err != nil {
			return err
		}
		g, err := startGateway(cfg, log, access, cfg.Listen, "http://"+c.addr, errc)
		if err != nil {
			_ = c.shutdown(context.Background())
			return err
		}
		parts = append(parts, g, c)
		publicURL = "http://" + g.addr
		log.Info("core listening (internal)", "addr", c.addr)
	}

	admin, err := startAdmin(cfg.AdminListen, cfg.Admin.PProf, parts, errc)
	if err != nil {
		_ = stopAll()
		return err
	}
	if admin != nil {
		parts = append(parts, admin)
		log.Info("admin listening", "addr", admin.addr)
	}
	log.Info("reqgate started", "role", cfg.Role, "listen", publicURL)
	for _, p := range parts {
		if c, ok := p.(*coreNode); ok && c.demo {
			base := publicURL
			fmt.Fprintf(stdout, "\nDemo account ready:\n  base URL (v2): %s/api2/demo\n  base URL (v1): %s/api/demo\n"+
				"  users: demo / demo, viewer / viewer\n  try:   curl -u demo:demo %s/api2/demo/re/1\n\n", base, base, base)
		}
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", "signal")
	case err = <-errc:
		log.Error("server failed, shutting down", "err", err)
	}
	return errors.Join(err, stopAll())
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
