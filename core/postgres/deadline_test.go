package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
)

// An update that waits for its record's lock (another replica's transaction holds it) until its deadline
// passes is rolled back and says so (core.ErrExpired, which the core answers 503): when the lock comes free,
// nothing of it lands over what the holder wrote. The answer comes while the lock is still held, so the test
// needs no timing of its own.
func TestUpdatePastItsDeadlineWhileLockedIsRolledBack(t *testing.T) {
	dsn := pgtest.Shared(t).NewDatabase(t)
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Apply(ctx, accounts.Demo()); err != nil {
		t.Fatal(err)
	}
	acct, err := st.Account(ctx, accounts.DemoAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := st.Fields(ctx, acct.ID, "re")
	if err != nil {
		t.Fatal(err)
	}
	var titleID int64
	for _, f := range fields {
		if f.SpecialPurpose == "title" {
			titleID = f.ID
		}
	}
	before, err := st.Record(ctx, acct.ID, "re", 1)
	if err != nil {
		t.Fatal(err)
	}

	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // rolled back below; this is for an early failure
	if _, err := tx.Exec(ctx, "SELECT 1 FROM records WHERE account_id = $1 AND kind = 're' AND id = 1 FOR UPDATE", acct.ID); err != nil {
		t.Fatal(err)
	}

	late, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = st.UpdateRecord(late, acct.ID, "re", 1, core.Unconditional(core.Update{Values: map[int64]string{titleID: "Late"}, UserID: 1,
		Time: time.Now().Unix()}))
	if !errors.Is(err, core.ErrExpired) {
		t.Fatalf("update past its deadline while the record is locked: %v, want core.ErrExpired", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	after, err := st.Record(ctx, acct.ID, "re", 1)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version || after.Values[titleID] != before.Values[titleID] {
		t.Errorf("record after the expired update: version %d, title %q; want version %d, title %q",
			after.Version, after.Values[titleID], before.Version, before.Values[titleID])
	}
}
