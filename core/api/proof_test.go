package api_test

import (
	"encoding/base64"
	"testing"

	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/internal/wire"
)

// TestAuthProof checks that the core gives its proof of authentication exactly when it authenticated the
// request's credential for the request's account, whatever the status, and never on an answer it gives
// before authenticating.
func TestAuthProof(t *testing.T) {
	e := start(t, api.Options{})
	alice := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-secret"))
	for _, tc := range []struct {
		name   string
		r      req
		status int
		proven bool
	}{
		{"read", req{Path: "/api2/acme/user"}, 200, true},
		{"base URL alone", req{Path: "/api2/acme/"}, 404, true},
		{"unknown segment", req{Path: "/api2/acme/nosuch"}, 404, true},
		{"bad id", req{Path: "/api2/acme/re/x"}, 404, true},
		{"v2-only path on v1", req{Path: "/api/acme/re/view"}, 404, true},
		{"wrong method", req{Method: "PATCH", Path: "/api2/acme/re/1"}, 405, true},
		{"unknown version", req{Path: "/api3/acme/re/1"}, 404, false},
		{"unknown version 7", req{Path: "/api7/acme/user"}, 404, false},
		{"no key", req{Path: "/api2/"}, 404, false},
		{"malformed key", req{Path: "/api2/ac%20me/user"}, 401, false},
		{"unknown account", req{Path: "/api2/nosuch/user"}, 401, false},
		{"wrong password", req{Path: "/api2/acme/user", User: "alice", Pass: "wrong"}, 401, false},
		{"no credentials", req{Path: "/api2/acme/user", NoAuth: true}, 401, false},
		{"other account's user", req{Path: "/api2/other/user"}, 401, false},
		{"not the API", req{Path: "/nosuch"}, 404, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.on(t).do(tc.r)
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Body)
			}
			got := res.Header.Get(wire.AuthProofHeader)
			switch {
			case tc.proven && got != wire.AuthProof("acme", alice):
				t.Fatalf("%s = %q, want the proof of alice's credential for acme", wire.AuthProofHeader, got)
			case !tc.proven && got != "":
				t.Fatalf("%s = %q on an answer given before authentication", wire.AuthProofHeader, got)
			}
		})
	}
}
