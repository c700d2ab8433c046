package api_test

import (
	"os"
	"testing"

	"github.com/reqgate/reqgate/core/postgres/pgtest"
)

// TestMain stops the PostgreSQL server the tests on that engine share.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}
