package storemetrics_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/core/storemetrics"
	"github.com/reqgate/reqgate/core/storetest"
)

// TestWrap checks that calls through the wrapper are counted under their operation, and that the wrapper
// passes results and errors through.
func TestWrap(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "core.db"))
	if err != nil {
		t.Fatal(err)
	}
	m := storemetrics.Wrap(st)
	defer m.Close()
	before := count(t, "account")
	if err := m.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	a, err := m.Account(ctx, "acme")
	if err != nil || a.APIKey != "acme" {
		t.Fatalf("Account = %+v, %v", a, err)
	}
	if _, err := m.Account(ctx, "nobody"); err == nil {
		t.Error("Account(nobody): no error")
	}
	if got, want := count(t, "account"), before+2; got != want {
		t.Errorf(`reqgate_core_store_seconds_count{op="account"} = %d, want %d`, got, want)
	}
}

// count returns the number of observations of one operation's histogram.
func count(t *testing.T, op string) int {
	t.Helper()
	var b strings.Builder
	metrics.WritePrometheus(&b, false)
	prefix := `reqgate_core_store_seconds_count{op="` + op + `"} `
	for line := range strings.SplitSeq(b.String(), "\n") {
		if n, ok := strings.CutPrefix(line, prefix); ok {
			var v int
			for _, c := range n {
				v = v*10 + int(c-'0')
			}
			return v
		}
	}
	return 0
}
