package postgres

import (
	"context"
	"fmt"
)

// lockExclusive is the advisory lock key of Exclusive.
const lockExclusive int64 = 0x7265716761746503 // "reqgate\x03"

// Exclusive runs fn while holding a database-wide advisory lock, so that no other replica runs its own
// Exclusive section meanwhile. It is for start-up steps that read, then write, such as "if the store is
// empty, provision the demo account and seed its history": without it, two replicas starting together on an
// empty database would both see it empty. fn uses the store as usual (its calls take other connections).
func (s *Store) Exclusive(ctx context.Context, fn func(ctx context.Context) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("exclusive: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockExclusive); err != nil {
		return fmt.Errorf("exclusive: lock: %w", err)
	}
	defer func() {
		// A failed unlock (the connection broke) also ends the session, which releases the lock.
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockExclusive); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	return fn(ctx)
}
