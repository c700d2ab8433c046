package main

import (
	"testing"

	"github.com/reqgate/reqgate/core/postgres/pgtest"
)

// TestMain stops the private PostgreSQL server the PostgreSQL tests of this package share (started by the
// first of them that needs it).
func TestMain(m *testing.M) {
	m.Run() // TestMain returning, the test binary exits with m.Run's code
	pgtest.Stop()
}
