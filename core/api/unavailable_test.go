package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
)

// TestStoreDownIs503 stops the PostgreSQL server under a core: reads and writes are answered 503 with
// Retry-After (the client may retry), never 500.
func TestStoreDownIs503(t *testing.T) {
	srv, st := ownPostgres(t)
	e := serve(t, st, api.Options{})
	id := e.create("/api2", "re", body("requirement", "field_101", "Before"))
	path := "/api2/" + keyAcme + "/re/" + id
	e.must(req{Path: path}, http.StatusOK)
	srv.Stop()
	for _, r := range []req{
		{Path: path},
		{Method: "PUT", Path: path, Body: body("requirement", "field_101", "After")},
		{Method: "POST", Path: "/api2/" + keyAcme + "/re", Body: body("requirement", "field_101", "New")},
		{Method: "DELETE", Path: path},
	} {
		got := e.do(r)
		if got.Status != http.StatusServiceUnavailable || got.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s with the store down: %d Retry-After %q %s, want 503 with Retry-After",
				r.Method, r.Path, got.Status, got.Header.Get("Retry-After"), got.Body)
		}
	}
}

// ownPostgres starts a PostgreSQL server of the test's own, one it may stop and restart (unlike the shared
// one), opens a store on it, and stops it when the test ends. Under -short it skips the test.
func ownPostgres(t *testing.T) (*pgtest.Server, *postgres.Store) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a PostgreSQL server; make test runs it, make check (-short) does not")
	}
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	st, err := postgres.Open(context.Background(), srv.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	return srv, st
}
