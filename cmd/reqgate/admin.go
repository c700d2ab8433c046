package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/reqgate/reqgate/config"
)

// adminNode serves /metrics (Prometheus text), /healthz and /readyz on the admin listener, POST /purge (an
// account's cached reads and remembered credentials dropped), and, with admin.pprof, Go's profiler at
// /debug/pprof/. Every endpoint but the three a monitor or a kubelet reads asks for the bearer token of
// admin.token_file when it is set (adminauth.go).
type adminNode struct {
	srv   *http.Server
	addr  string
	token *adminToken // nil without admin.token_file
}

// purger is a part that can forget what it caches of an account (the admin listener's POST /purge).
type purger interface{ purge(account string) }

// maxProfile is the longest CPU profile or trace the admin listener lets run to its end.
const maxProfile = 120 * time.Second

// startAdmin serves the admin endpoints on ln. It starts before the parts: /healthz answers 200 from then on
// (liveness, also while a store is reached or account files are applied), /readyz 503 until r is ready.
// On a listener that is not loopback and without admin.token_file, /purge and the profiler are not served:
// anyone who reaches the port could use them. It fails only when the token file cannot be read.
func startAdmin(ln net.Listener, r *readiness, cfg *config.Config, log *slog.Logger, errc chan<- error) (*adminNode, error) {
	n := &adminNode{addr: ln.Addr().String()}
	if cfg.Admin.TokenFile != "" {
		var err error
		if n.token, err = loadAdminToken(cfg.Admin.TokenFile); err != nil {
			return nil, fmt.Errorf("admin: %w", err)
		}
	}
	private := n.token != nil || isLoopback(ln.Addr())
	if !private {
		off := "/purge"
		if cfg.Admin.PProf {
			off += " and /debug/pprof/"
		}
		log.Warn("admin listener is not loopback and admin.token_file is not set: "+off+" off; /metrics, /healthz and /readyz only",
			"addr", n.addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		writeMetrics(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, req *http.Request) {
		excluded, err := readyzExclusions(req.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(req.Context(), readyTimeout)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := r.ready(ctx, excluded); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready:", err)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	if private {
		mux.HandleFunc("POST /purge", servePurge(r.all, log))
	}
	writeTimeout := 10 * readyTimeout
	if cfg.Admin.PProf && private {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", redactedCmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		writeTimeout = maxProfile + 10*time.Second // a CPU profile or trace answers after its ?seconds=
	}
	n.srv = &http.Server{Handler: n.guard(mux), ReadHeaderTimeout: readyTimeout, WriteTimeout: writeTimeout}
	go func() {
		if err := n.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("admin: %w", err)
		}
	}()
	return n, nil
}

func (n *adminNode) ready(context.Context) error { return nil }

func (n *adminNode) shutdown(ctx context.Context) error {
	err := n.srv.Shutdown(ctx)
	if drainCut(ctx, err) {
		// A scrape or a profile still running: nothing worth logging as cut.
		_ = n.srv.Close()
		err = nil
	}
	return err
}
