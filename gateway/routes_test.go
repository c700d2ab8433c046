package gateway

import (
	"strconv"
	"testing"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// TestRoutesMemo checks that a remembered parse is the parse, for targets seen again, that malformed targets
// stay errors, and that the memo stays bounded.
func TestRoutesMemo(t *testing.T) {
	rs := newRoutes()
	for _, target := range []string{"/api2/demo/re/1", "/api2/x/../demo/./re/1?b=2&a=1", "/api2//demo/re/1", "/api3/x/y", "/nosuch", "/api2/demo/%zz"} {
		want, wantErr := route.Parse([]byte(target))
		for range 2 {
			got, err := rs.parse([]byte(target))
			if (err != nil) != (wantErr != nil) || got.Path != want.Path || got.Query != want.Query ||
				got.Class != want.Class || got.APIKey != want.APIKey || got.Version != want.Version {
				t.Fatalf("parse(%q) = %+v, %v; want %+v, %v", target, got, err, want, wantErr)
			}
		}
	}
	for i := range maxRoutes + 10 {
		_, _ = rs.parse([]byte("/api2/demo/re/" + strconv.Itoa(i)))
	}
	n := 0
	rs.m.Range(func(_, _ any) bool { n++; return true })
	if n > maxRoutes {
		t.Fatalf("memo holds %d targets, more than %d", n, maxRoutes)
	}
}
