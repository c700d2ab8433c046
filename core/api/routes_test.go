package api

import (
	"testing"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// TestEveryRouteHasAHandler: every route of the table that the core serves has its handler, and the core has no
// handler of a route the table does not have, or of one the gateway answers alone.
func TestEveryRouteHasAHandler(t *testing.T) {
	classes := map[route.Class]bool{}
	for _, rt := range route.Table() {
		classes[rt.Class] = true
		if h := handlers[rt.Class]; (h == nil) != rt.GatewayOnly {
			t.Errorf("route %s (%s): handler %v, gateway only %v", rt.Class, rt.Template, h != nil, rt.GatewayOnly)
		}
	}
	for c := range handlers {
		if !classes[c] {
			t.Errorf("handler of %s, which is no route of the table", c)
		}
	}
}
