package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
)

// TestExclusiveProvisionsDemoOnce starts several "replicas" on one empty database that each provision the
// demo account when the store is empty, inside Exclusive: exactly one of them provisions it.
func TestExclusiveProvisionsDemoOnce(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	var (
		mu          sync.Mutex
		provisioned int
		wg          sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			st, err := postgres.Open(ctx, dsn)
			if err != nil {
				t.Error(err)
				return
			}
			defer st.Close()
			err = st.Exclusive(ctx, func(ctx context.Context) error {
				empty, err := st.Empty(ctx)
				if err != nil || !empty {
					return err
				}
				if err := st.Apply(ctx, accounts.Demo()); err != nil {
					return err
				}
				mu.Lock()
				provisioned++
				mu.Unlock()
				return accounts.SeedDemoHistory(ctx, st)
			})
			if err != nil {
				t.Errorf("replica start-up: %v", err)
			}
		})
	}
	wg.Wait()
	if got, want := provisioned, 1; got != want {
		t.Errorf("replicas that provisioned the demo = %d, want %d", got, want)
	}
}
