package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
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
	m.Run() // TestMain returning, the test binary exits with m.Run's code
	pgtest.Stop()
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

// TestPoolMetrics checks that an open store shows its pool in the metrics, and a closed one no longer.
func TestPoolMetrics(t *testing.T) {
	st := openFresh(t)
	var b strings.Builder
	metrics.WritePrometheus(&b, false)
	if !strings.Contains(b.String(), "reqgate_core_store_pool_max_conns 16") {
		t.Errorf("metrics lack the pool of the open store:\n%s", grep(b.String(), "pool"))
	}
	st.Close()
	b.Reset()
	metrics.WritePrometheus(&b, false)
	if !strings.Contains(b.String(), "reqgate_core_store_pool_max_conns 0") {
		t.Errorf("metrics still count the closed store's pool:\n%s", grep(b.String(), "pool"))
	}
}

func grep(text, word string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, word) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
