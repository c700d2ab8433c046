package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/ratelimit"
)

// Live reload: on SIGHUP the process reads its configuration again from the same flags, environment and
// --config file as at start, and the account files it names, and applies what can change while it serves
// (liveKeys), without closing a listener or a connection. A configuration that does not load or validate,
// or account files that do not parse, are refused as a whole: nothing changes, and the refusal is logged
// and counted. Keys that only a restart can change are named in a warning and keep their values.

// liveKeys are the configuration keys a reload applies to the running process.
var liveKeys = map[string]bool{
	"log.level":              true,
	"cors.allowed_origins":   true,
	"server.trusted_proxies": true,
	"cache.ttl":              true,
	"cache.stale_if_error":   true,
	"ratelimit.policies":     true,
	"ratelimit.overrides":    true,
	"core.schema_ttl":        true,
	"accounts":               true, // the list; changed contents of the files are applied too
}

// reloadable is a part that reads its own files again on a reload and swaps them in itself, keeping the
// old ones when the new ones fail (the public listener's TLS certificate holder).
type reloadable interface{ Reload() error }

// reloader applies the configuration read again on SIGHUP to the parts of a running role.
type reloader struct {
	role          string
	args, environ []string
	log           *slog.Logger
	level         *slog.LevelVar

	start    *config.Config // as the process started: what the restart keys still hold
	cur      *config.Config // the live keys in force
	accounts [32]byte       // digest of the account files last applied
	seen     string         // stamp of the files when they were last read (see stamp)
	gw       *gatewayNode   // nil in the core role
	core     *coreNode      // nil in the gateway role
	// others are parts that reload themselves, asked first: a failure refuses the reload.
	others []reloadable
}

// newReloader prepares the reload of a role started with cfg from args and environ.
func newReloader(cfg *config.Config, args, environ []string, log *slog.Logger, level *slog.LevelVar) *reloader {
	r := &reloader{role: cfg.Role, args: args, environ: environ, log: log, level: level, start: cfg, cur: cfg}
	r.accounts, _ = digestFiles(cfg.Accounts) // an unreadable file failed the start already
	// Stamped now, just after cfg was read, not when the watch starts: a file changed while the role starts
	// (opening the store, applying the account files) is then reloaded at the first check, not missed for good.
	r.seen = r.stamp()
	return r
}

// attach names the parts a reload reconfigures, once they have started.
func (r *reloader) attach(gw *gatewayNode, c *coreNode) {
	r.gw, r.core = gw, c
	if gw != nil && gw.certs != nil {
		r.others = append(r.others, reloadFunc(func() error { return gw.reloadCerts(r.log) }))
	}
}

// reloadFunc is a function as a reloadable part.
type reloadFunc func() error

func (f reloadFunc) Reload() error { return f() }

// plan is a reloaded configuration, checked and ready to apply.
type plan struct {
	cfg      *config.Config
	prov     *core.Provision    // the account files parsed; nil when they did not change
	digest   [32]byte           // of the account files
	limiter  *ratelimit.Limiter // the gateway's; nil without policies (or without a gateway)
	live     []string           // live keys that changed
	restarts []string           // keys that differ from the start and need a restart
}

// reload reads the configuration again and applies it, or refuses it as a whole.
func (r *reloader) reload(ctx context.Context) {
	p, err := r.prepare()
	if err == nil {
		err = r.apply(ctx, p)
	}
	if err != nil {
		reloadsRefused.Inc()
		r.log.Error("configuration reload refused; the configuration in force stays", "err", err)
		return
	}
	for _, k := range p.restarts {
		r.log.Warn("configuration reload: "+k+" changed and needs a restart; the value in force stays", "key", k)
	}
	reloadsApplied.Inc()
	r.log.Info("configuration reloaded", "changed", p.live, "accounts_applied", p.prov != nil,
		"needs_restart", p.restarts)
}

// prepare loads the configuration and the account files as at start and checks them, changing nothing.
func (r *reloader) prepare() (*plan, error) {
	cfg, err := config.Load(r.role, r.args, r.environ)
	if err != nil {
		return nil, err
	}
	p := &plan{cfg: cfg}
	for _, k := range config.Changed(r.start, cfg) {
		if !liveKeys[k] {
			p.restarts = append(p.restarts, k)
		}
	}
	for _, k := range config.Changed(r.cur, cfg) {
		if liveKeys[k] {
			p.live = append(p.live, k)
		}
	}
	if r.core != nil {
		if err := r.prepareAccounts(p); err != nil {
			return nil, err
		}
	}
	if r.gw != nil {
		if p.limiter, err = r.gw.nextLimiter(r.start, cfg, r.log); err != nil {
			return nil, fmt.Errorf("ratelimit: %w", err)
		}
	}
	return p, nil
}

// prepareAccounts parses the account files when they, or their list, changed since last applied.
func (r *reloader) prepareAccounts(p *plan) error {
	d, err := digestFiles(p.cfg.Accounts)
	if err != nil {
		return err
	}
	p.digest = d
	if d == r.accounts || len(p.cfg.Accounts) == 0 {
		return nil
	}
	if p.prov, err = accounts.LoadFiles(p.cfg.Accounts...); err != nil {
		return fmt.Errorf("account files: %w", err)
	}
	return nil
}

// apply applies p to the parts: first what may still fail (the parts reloading themselves, the account
// files in one store transaction), so that a failure leaves the rest as it was; then the swaps that cannot.
func (r *reloader) apply(ctx context.Context, p *plan) error {
	for _, o := range r.others {
		if err := o.Reload(); err != nil {
			return err
		}
	}
	if p.prov != nil {
		if err := r.core.applyAccounts(ctx, p.prov); err != nil {
			return err
		}
		r.purgeAccounts(p.prov)
		r.log.Info("account files applied", "files", p.cfg.Accounts, "accounts", len(p.prov.Accounts))
	}
	r.accounts = p.digest
	if r.core != nil && r.role == config.RoleCore && changedAny(p.live, "server.trusted_proxies", "core.schema_ttl") {
		if err := r.core.reconfigure(p.cfg, r.log); err != nil {
			return err
		}
	}
	if r.gw != nil {
		if err := r.gw.reconfigure(p.cfg, p.limiter); err != nil {
			return err
		}
	}
	r.level.Set(parseLevel(p.cfg.Log.Level))
	r.cur = p.cfg
	return nil
}

// purgeAccounts makes the gateways forget the cached reads and remembered credentials of the accounts of
// reapplied account files: a changed password or a user marked deleted must not pass on a credential a gateway
// remembers. In serve the gateway of the process purges them, here and, over Redis, on the other replicas; a
// core with redis.url publishes the purges on the same bus for the gateways in front of it.
func (r *reloader) purgeAccounts(p *core.Provision) {
	keys := make([]string, 0, len(p.Accounts))
	for _, a := range p.Accounts {
		keys = append(keys, a.APIKey)
	}
	switch {
	case r.gw != nil:
		for _, k := range keys {
			r.gw.purge(k)
		}
	case r.core != nil:
		r.core.announce(keys...)
	}
}

// serveUntil runs until ctx ends or a server fails, reloading on every signal from hup and, with
// reload.watch, when the --config file, the TLS files or an account file changed.
func (r *reloader) serveUntil(ctx context.Context, hup <-chan os.Signal, errc <-chan error) error {
	var tick <-chan time.Time
	if r.start.Reload.Watch > 0 {
		t := time.NewTicker(r.start.Reload.Watch)
		defer t.Stop()
		tick = t.C
	}
	// The files are stamped before they are read, so a change while a reload reads them is noticed at the next
	// check. A reload that changed the list of account files stamps again after it, so that the new files'
	// stamps do not look like a change.
	reload := func() {
		accounts := r.cur.Accounts
		r.reload(ctx)
		if !slices.Equal(accounts, r.cur.Accounts) {
			r.seen = r.stamp()
		}
	}
	for {
		select {
		case <-ctx.Done():
			r.log.Info("shutting down", "reason", "signal")
			return nil
		case err := <-errc:
			r.log.Error("server failed, shutting down", "err", err)
			return err
		case <-hup:
			r.log.Info("reloading the configuration", "reason", "SIGHUP")
			r.seen = r.stamp()
			reload()
		case <-tick:
			if now := r.stamp(); now != r.seen {
				// A refused file is not tried again until it changes again.
				r.log.Info("reloading the configuration", "reason", "file changed")
				r.seen = now
				reload()
			}
		}
	}
}

// stamp is the modification time and size of the --config file, the TLS certificate and key (a renewal
// replaces them in place), the admin token file and the account files in force: what the watch compares. A file that cannot be read
// stamps as missing.
func (r *reloader) stamp() string {
	var b strings.Builder
	files := []string{r.start.ConfigFile, r.start.Server.TLSCertFile, r.start.Server.TLSKeyFile, r.start.Admin.TokenFile}
	for _, p := range append(files, r.cur.Accounts...) {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%s\x00%d\x00%d\x00", p, fi.ModTime().UnixNano(), fi.Size())
		} else {
			fmt.Fprintf(&b, "%s\x00missing\x00", p)
		}
	}
	return b.String()
}

// digestFiles is a digest of the names and contents of the account files.
func digestFiles(paths []string) ([32]byte, error) {
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return [32]byte{}, fmt.Errorf("account files: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", strconv.Quote(p), len(b))
		h.Write(b)
	}
	var d [32]byte
	h.Sum(d[:0])
	return d, nil
}

func changedAny(changed []string, keys ...string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(changed, k) })
}
