// Package coretest runs the real core (the SQLite store and the XML API) on a real loopback port for tests,
// above all the gateway's: a test gets the core's URL, talks HTTP to it, and may stop and restart it on the
// same port and database file.
package coretest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/sqlite"
)

// Options choose what the core serves.
type Options struct {
	// AccountsYAML is an account file (see core/accounts) applied to the new store. If empty, the demo account
	// (api_key demo, users demo/demo and viewer/viewer) with its seed history.
	AccountsYAML string
	// API tunes the HTTP layer (body limit, credential TTL, clock). Fields left zero take the values of the
	// default configuration (APIOptions).
	API api.Options
	// TLS, when set, makes the core serve HTTPS only, with this configuration (its certificate must name
	// 127.0.0.1, or the name the client verifies): URL is then https://127.0.0.1:port, as another
	// implementation of the interface is reached. A restart serves it again.
	TLS *tls.Config
}

// Core is a running core.
type Core struct {
	URL    string // http://127.0.0.1:port (https:// with Options.TLS)
	Addr   string // 127.0.0.1:port
	DBPath string // the SQLite file
	Store  core.Store
	API    *api.Server

	opt    Options
	mu     sync.Mutex
	srv    *http.Server
	done   chan struct{}
	closed bool
}

// fastHashes lowers the bcrypt cost of account files once (sync.Once orders it before every Start).
var fastHashes sync.Once

// Start runs a core with a new SQLite store in a temporary directory and stops it when the test ends. It
// fails the test if anything cannot start. Passwords are hashed with bcrypt.MinCost to keep tests fast.
func Start(tb testing.TB, opt Options) *Core {
	tb.Helper()
	fastHashes.Do(func() { accounts.BcryptCost = bcrypt.MinCost })
	c := &Core{DBPath: filepath.Join(tb.TempDir(), "core.db"), opt: opt}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, c.DBPath)
	if err != nil {
		tb.Fatalf("coretest: open store: %v", err)
	}
	if err := provision(ctx, st, opt.AccountsYAML); err != nil {
		st.Close()
		tb.Fatalf("coretest: provision: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		tb.Fatalf("coretest: listen: %v", err)
	}
	c.Addr = ln.Addr().String()
	c.URL = "http://" + c.Addr
	if opt.TLS != nil {
		c.URL = "https://" + c.Addr
	}
	c.serve(tb, st, ln)
	tb.Cleanup(c.Stop)
	return c
}

// provision applies the account file, or the demo account and its history.
func provision(ctx context.Context, st core.Store, yaml string) error {
	if yaml != "" {
		p, err := accounts.Parse("accounts.yaml", []byte(yaml))
		if err != nil {
			return err
		}
		return st.Apply(ctx, p)
	}
	if err := st.Apply(ctx, accounts.Demo()); err != nil {
		return err
	}
	return accounts.SeedDemoHistory(ctx, st)
}

// APIOptions are the options cmd/reqgate gives the core's API under the default configuration
// (api.OptionsFrom).
func APIOptions() api.Options {
	o, err := api.OptionsFrom(config.Default(config.RoleCore))
	if err != nil {
		panic(err) // the default configuration is valid
	}
	return o
}

// serve starts the HTTP server over st on ln.
func (c *Core) serve(tb testing.TB, st core.Store, ln net.Listener) {
	tb.Helper()
	apiOpt := configtest.Overlay(APIOptions(), c.opt.API)
	if apiOpt.Logger == nil {
		apiOpt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := api.New(st, apiOpt)
	if err != nil {
		st.Close()
		ln.Close()
		tb.Fatalf("coretest: %v", err)
	}
	c.Store = st
	c.API = srv
	c.srv = &http.Server{Handler: c.API, ReadHeaderTimeout: 10 * time.Second}
	if c.opt.TLS != nil {
		ln = tls.NewListener(ln, c.opt.TLS)
	}
	c.done = make(chan struct{})
	c.closed = false
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		srv.Serve(ln) //nolint:errcheck // ErrServerClosed after Stop
	}(c.srv, c.done)
}

// Stop closes the listener and every connection, then the store. It may be called more than once.
func (c *Core) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.srv.Close() //nolint:errcheck // closing is best effort
	<-c.done
	c.Store.Close() //nolint:errcheck // closing is best effort
}

// Restart stops the core if it runs and starts it again on the same port and database file, without
// provisioning anything: what was stored survives.
func (c *Core) Restart(tb testing.TB) {
	tb.Helper()
	c.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := sqlite.Open(context.Background(), c.DBPath)
	if err != nil {
		tb.Fatalf("coretest: reopen store: %v", err)
	}
	var ln net.Listener
	for i := 0; ; i++ {
		ln, err = net.Listen("tcp", c.Addr)
		if err == nil {
			break
		}
		if i == 50 || !errors.Is(err, syscall.EADDRINUSE) {
			st.Close()
			tb.Fatalf("coretest: listen again on %s: %v", c.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.serve(tb, st, ln)
}
