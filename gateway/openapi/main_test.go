package openapi_test

import (
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestMain removes the reqgate binary the tests built.
func TestMain(m *testing.M) {
	m.Run() // TestMain returning, the test binary exits with m.Run's code
	testbin.Remove()
}
