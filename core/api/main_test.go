package api_test

import (
	"testing"

	"github.com/reqgate/reqgate/core/postgres/pgtest"
)

// TestMain stops the PostgreSQL server the tests on that engine share.
func TestMain(m *testing.M) {
	m.Run() // TestMain returning, the test binary exits with m.Run's code
	pgtest.Stop()
}
