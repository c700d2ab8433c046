package main

import (
	"testing"

	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/internal/testbin"
)

// TestMain stops the private PostgreSQL server the PostgreSQL tests of this package share (started by the
// first of them that needs it), and removes the reqgate binary the tests built.
func TestMain(m *testing.M) {
	m.Run() // TestMain returning, the test binary exits with m.Run's code
	pgtest.Stop()
	testbin.Remove()
}
