package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/gateway/certs"
	"github.com/reqgate/reqgate/ratelimit"
)

// healthInterval is how often the gateway probes each core's /readyz when there are several: no configuration
// key, but not left to the gateway either, whose zero means no probes. Once a second takes a stopped core out,
// and puts a recovered one back, within about a second, for a few tiny requests per core.
const healthInterval = time.Second

// gatewayNode is the gateway with its Redis client (when --redis is set).
type gatewayNode struct {
	gw      *gateway.Gateway
	rdb     redis.UniversalClient
	addr    string
	limiter *ratelimit.Limiter // in force; nil without rate policies
	certs   *certs.Holder      // nil when the public listener serves plain HTTP
	log     *slog.Logger
}

// url is the gateway's base URL as callers reach it on its listener.
func (n *gatewayNode) url() string {
	if n.certs != nil {
		return "https://" + n.addr
	}
	return "http://" + n.addr
}

// reloadCerts reads server.tls_cert_file and server.tls_key_file again and presents the new pair to the
// handshakes from then on (connections already open keep theirs). When the files do not hold a valid pair
// the pair in use stays and the error says why. Without TLS it does nothing. The file names are those of the
// start: a reload reads the same paths.
func (n *gatewayNode) reloadCerts(log *slog.Logger) error {
	if n.certs == nil {
		return nil
	}
	if err := n.certs.Reload(); err != nil {
		return fmt.Errorf("server.tls_cert_file: %w", err)
	}
	logCertificate(log, "tls certificate reloaded", n.certs)
	return nil
}

// logCertificate logs the subject and expiry of the pair h serves.
func logCertificate(log *slog.Logger, msg string, h *certs.Holder) {
	if leaf := h.Certificate().Leaf; leaf != nil {
		log.Info(msg, "subject", leaf.Subject.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}

// servedCerts is the pair reqgate_tls_cert_expiry_seconds reads: the public listener's (one per process).
var servedCerts atomic.Pointer[certs.Holder]

// exposeCertExpiry makes reqgate_tls_cert_expiry_seconds the seconds until the NotAfter of the pair h serves,
// read at each scrape, so it follows reloads and counts down between them.
func exposeCertExpiry(h *certs.Holder) {
	servedCerts.Store(h)
	metrics.GetOrCreateGauge("reqgate_tls_cert_expiry_seconds", func() float64 {
		if leaf := servedCerts.Load().Certificate().Leaf; leaf != nil {
			return time.Until(leaf.NotAfter).Seconds()
		}
		return 0
	})
}

// purge drops an account's cached reads and remembered credentials on every gateway replica.
func (n *gatewayNode) purge(account string) { n.gw.Purge(account) }

// startGateway builds the limiter and the gateway from cfg and serves on ln in front of upstream (one URL or a
// comma-separated list), traced by tr (nil: off). The caller keeps ln when it fails.
func startGateway(cfg *config.Config, log *slog.Logger, access *accesslog.Logger, ln net.Listener, upstream string, tr *tracing, errc chan<- error) (*gatewayNode, error) {
	n := &gatewayNode{log: log}
	opt, err := gateway.OptionsFrom(cfg)
	if err != nil {
		return nil, err
	}
	if opt.Upstreams = (config.Upstream{URL: upstream}).URLs(); len(opt.Upstreams) == 0 {
		return nil, errors.New("gateway: no upstream URL")
	}
	if n.rdb, err = newRedis(cfg); err != nil {
		return nil, err
	}
	if len(cfg.RateLimit.Policies) > 0 {
		l, err := ratelimit.New(limiterOptions(cfg, n.rdb, log))
		if err != nil {
			n.closeRedis()
			return nil, fmt.Errorf("ratelimit: %w", err)
		}
		opt.Limiter, n.limiter = l, l
	}
	if cfg.Server.TLSCertFile != "" {
		h, err := certs.Load(cfg.Server.TLSCertFile, cfg.Server.TLSKeyFile)
		if err != nil {
			n.closeRedis()
			return nil, fmt.Errorf("server.tls_cert_file: %w", err)
		}
		n.certs = h
		logCertificate(log, "tls certificate loaded", h)
		exposeCertExpiry(h)
	}
	opt.HealthInterval = healthInterval
	opt.Redis = n.rdb
	opt.Logger = log.With("part", "gateway")
	opt.AccessLog = access
	opt.Tracer = tr.tracer(gatewayScope)
	gw, err := gateway.New(opt)
	if err != nil {
		n.closeRedis()
		return nil, err
	}
	n.gw = gw
	n.addr = ln.Addr().String()
	go func() {
		if err := n.serve(ln); err != nil {
			errc <- err
		}
	}()
	return n, nil
}

// nextLimiter builds the limiter of next's rate policies and overrides for a reload, with the other
// ratelimit settings of start (they need a restart): from the limiter in force when there is one, so that
// it keeps its counts. Nil when next has no policies.
func (n *gatewayNode) nextLimiter(start, next *config.Config, log *slog.Logger) (*ratelimit.Limiter, error) {
	if len(next.RateLimit.Policies) == 0 {
		return nil, nil
	}
	o := limiterOptions(start, n.rdb, log)
	p := limiterOptions(next, nil, log)
	o.Policies, o.Overrides = p.Policies, p.Overrides
	if n.limiter == nil {
		return ratelimit.New(o)
	}
	return n.limiter.WithPolicies(o.Policies, o.Overrides)
}

// reconfigure applies the live settings of cfg to the serving gateway, with limiter (from nextLimiter).
func (n *gatewayNode) reconfigure(cfg *config.Config, limiter *ratelimit.Limiter) error {
	l, err := gateway.LiveFrom(cfg)
	if err != nil {
		return err
	}
	if limiter != nil {
		l.Limiter = limiter // a nil *Limiter in the interface would not read as "no limiter"
	}
	if err := n.gw.Reconfigure(l); err != nil {
		return err
	}
	n.limiter = limiter
	return nil
}

// serve runs the gateway on ln, behind TLS when certificates are configured.
func (n *gatewayNode) serve(ln net.Listener) error {
	if n.certs != nil {
		return n.gw.ServeTLS(ln, n.certs.TLSConfig())
	}
	return n.gw.Serve(ln)
}

// limiterOptions are the limiter's options of cfg, on rdb (nil: in process).
func limiterOptions(cfg *config.Config, rdb redis.UniversalClient, log *slog.Logger) ratelimit.Options {
	o := ratelimit.OptionsFrom(cfg)
	o.Redis = rdb
	o.Logger = log.With("part", "ratelimit")
	return o
}

// ready checks what the gateway's /readyz checks: the upstream core and, when configured, Redis.
func (n *gatewayNode) ready(context.Context) error { return n.gw.Ready() }

func (n *gatewayNode) shutdown(ctx context.Context) error {
	err := n.gw.Shutdown(ctx)
	if drainCut(ctx, err) {
		logCut(n.log, "gateway", err, "requests", n.gw.InFlight())
		err = nil
	}
	n.closeRedis()
	return err
}

func (n *gatewayNode) closeRedis() {
	if n.rdb != nil {
		_ = n.rdb.Close()
	}
}
