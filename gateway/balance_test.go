package gateway

import (
	"net"
	"net/http"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// deadAddr is a loopback address nothing listens on (bound, then closed): connections are refused.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestBalancerSkipsDeadCore puts a dead core next to a live one: no request fails, writes included, because a
// refused connection sends the request to the other core.
func TestBalancerSkipsDeadCore(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	for _, order := range []string{"dead first", "live first"} {
		t.Run(order, func(t *testing.T) {
			opt := Options{Upstreams: []string{"http://" + deadAddr(t), c.URL}, Cache: CacheOptions{Enabled: true}}
			if order == "live first" {
				opt.Upstreams = []string{c.URL, "http://" + deadAddr(t)}
			}
			gw := startGateway(t, opt)
			const create = `<requirement><fields><field><name>field_101</name><value>balanced</value></field></fields></requirement>`
			for i := range 10 {
				if res := do(t, http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo", create); res.Status != http.StatusCreated {
					t.Fatalf("create %d: status %d (%s)", i, res.Status, res.Body)
				}
				if res := get(t, gw.URL+"/api2/demo/re/2", "Cache-Control: no-cache"); res.Status != http.StatusOK {
					t.Fatalf("read %d: status %d", i, res.Status)
				}
			}
		})
	}
}
