package postgres_test

import (
	"context"
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/storetest"
)

// TestMain stops the package's private PostgreSQL server (started by the first test that needs it), and
// lowers the bcrypt cost of account files: the tests check what is stored, not how slowly it was hashed.
func TestMain(m *testing.M) {
	accounts.BcryptCost = bcrypt.MinCost
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// openFresh opens a store on a new, empty database of the shared test server.
func openFresh(t testing.TB) *postgres.Store {
	t.Helper()
	dsn := pgtest.Shared(t).NewDatabase(t)
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return st
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store { return openFresh(t) })
}
