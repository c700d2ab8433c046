package api_test

import (
	"os"
	"testing"

	"github.com/reqgate/reqgate/core/postgres/pgtest"
)

// TestMain stops the private PostgreSQL server that the tests running on both engines share (started by the
// first of them).
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}
