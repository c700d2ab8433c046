package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/reqgate/reqgate/config"
)

// adminNode serves /metrics (Prometheus text), /healthz and /readyz on the admin listener.
type adminNode struct {
	srv  *http.Server
	addr string
}

// startAdmin serves the admin endpoints on addr, or nothing when addr is "off".
func startAdmin(addr string, parts []part, errc chan<- error) (*adminNode, error) {
	if addr == config.Off || addr == "" {
		return nil, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		writeMetrics(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, p := range parts {
			if err := p.ready(ctx); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, "not ready:", err)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	ln, err := listen(addr)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	n := &adminNode{addr: ln.Addr().String(), srv: &http.Server{Handler: mux, ReadHeaderTimeout: readyTimeout,
		WriteTimeout: 10 * readyTimeout}}
	go func() {
		if err := n.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("admin: %w", err)
		}
	}()
	return n, nil
}

func (n *adminNode) ready(context.Context) error { return nil }

func (n *adminNode) shutdown(ctx context.Context) error { return n.srv.Shutdown(ctx) }
