package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// adminNode serves /metrics (Prometheus text), /healthz and /readyz on the admin listener.
type adminNode struct {
	srv  *http.Server
	addr string
}

// startAdmin serves the admin endpoints on ln. It starts before the parts: /healthz answers 200 from then on
// (liveness, also while a store is reached or account files are applied), /readyz 503 until r is ready.
func startAdmin(ln net.Listener, r *readiness, errc chan<- error) *adminNode {
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
		ctx, cancel := context.WithTimeout(req.Context(), readyTimeout)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := r.ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready:", err)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	n := &adminNode{addr: ln.Addr().String(), srv: &http.Server{Handler: mux, ReadHeaderTimeout: readyTimeout,
		WriteTimeout: 10 * readyTimeout}}
	go func() {
		if err := n.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("admin: %w", err)
		}
	}()
	return n
}

func (n *adminNode) ready(context.Context) error { return nil }

func (n *adminNode) shutdown(ctx context.Context) error { return n.srv.Shutdown(ctx) }
