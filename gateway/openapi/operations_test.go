package openapi

import (
	"slices"
	"testing"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// TestEveryRouteDocumented: every method of every route of the route table has its Operation, so the document
// names every route the gateway and the core serve (a route added to the table without one fails here), and no
// Operation describes a route or a method the table does not have.
func TestEveryRouteDocumented(t *testing.T) {
	for _, rt := range route.Table() {
		for _, m := range rt.Methods {
			if _, ok := operations[rt.Class][m]; !ok {
				t.Errorf("%s %s (%s): no Operation in routes.go, so not in the document", m, rt.Template, rt.Class)
			}
		}
	}
	for c, ms := range operations {
		rt, ok := c.Spec()
		for m := range ms {
			if !ok || !slices.Contains(rt.Methods, m) {
				t.Errorf("Operation %s of class %s: no such route in the table", m, c)
			}
		}
	}
}
