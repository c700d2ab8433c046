package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
)

// TestGatewayProbesSeveralCores starts the gateway node as `reqgate gateway` does, in front of two cores of
// which one answers /readyz with 503: the node's gateway probes the cores (the gateway itself probes only when
// told how often) and takes the unready core out, though no request was ever sent to it.
func TestGatewayProbesSeveralCores(t *testing.T) {
	core := func(status int) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/readyz" {
				t.Errorf("core got %s %s, want only probes", r.Method, r.URL.Path)
			}
			w.WriteHeader(status)
		}))
		t.Cleanup(s.Close)
		return s
	}
	ready, unready := core(http.StatusOK), core(http.StatusServiceUnavailable)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	n, err := startGateway(config.Default(config.RoleGateway), log, nil, ln, ready.URL+","+unready.URL, nil,
		make(chan error, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.shutdown(context.Background()) })

	state := func() (readyUp, unreadyUp bool) {
		for _, u := range n.gw.Stats().Upstreams {
			switch u.Addr {
			case ready.Listener.Addr().String():
				readyUp = u.Up
			case unready.Listener.Addr().String():
				unreadyUp = u.Up
			}
		}
		return readyUp, unreadyUp
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		readyUp, unreadyUp := state()
		if readyUp && !unreadyUp {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: ready core up %v, unready core up %v; want the unready one taken out by the probes",
				readyUp, unreadyUp)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
