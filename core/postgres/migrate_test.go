package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/storetest"
)

// TestConcurrentOpenMigratesOnce opens one fresh database from several goroutines at once, as replicas
// starting together do: every Open succeeds (the advisory lock makes the others wait, then find the schema
// current), and the schema is recorded once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	const replicas = 6
	stores := make([]*postgres.Store, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			st, err := postgres.Open(ctx, dsn)
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
				return
			}
			stores[i] = st
		})
	}
	wg.Wait()
	for _, st := range stores {
		if st != nil {
			defer st.Close()
		}
	}
	if t.Failed() {
		return
	}
	// Replicas applying the same account file at once serialise too, and the result is the same as once.
	for i := range replicas {
		wg.Go(func() {
			if err := stores[i].Apply(ctx, storetest.Fixture()); err != nil {
				t.Errorf("Apply from replica %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	acme, err := stores[0].Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	users, err := stores[1].Users(ctx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(users), 3; got != want {
		t.Errorf("users after concurrent applies = %d, want %d", got, want)
	}
	r, err := stores[2].Record(ctx, acme.ID, "re", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Version, int64(1); got != want {
		t.Errorf("seed record version after concurrent applies = %d, want %d", got, want)
	}
}

func TestOpenErrors(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	tests := []struct {
		name, dsn, want string
	}{
		{"malformed", "postgres://%zz", "open postgres store"},
		{"no such database", strings.Replace(srv.DSN("nosuchdb"), "postgres@", "postgres:s3cret@", 1), "nosuchdb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := postgres.Open(ctx, tc.dsn)
			if err == nil {
				st.Close()
				t.Fatal("Open: no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}
