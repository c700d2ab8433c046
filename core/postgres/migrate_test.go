package postgres_test

import (
	"context"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/sqlstore"
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

// TestMigrateFromV1 opens a database written by schema version 1 (records keyed by account, kind and id;
// terms without rids) and checks that migration 2 fills the rids in, so field searches find the old records
// and new writes keep working.
func TestMigrateFromV1(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Shared(t).NewDatabase(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := fs.ReadFile(sqlstore.PostgreSQL.Migrations, "0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE schema_version (version INTEGER NOT NULL)",
		string(v1),
		"INSERT INTO schema_version VALUES (1)",
		"INSERT INTO accounts VALUES (1, 'k', 'K')",
		"INSERT INTO objects VALUES (1, 're', 'u', 'Requirement', 'Requirements', '', 'RE', false)",
		`INSERT INTO fields VALUES (1, 1, 're', 'Title', 'Textbox', 'title', false, 1, '', '', 0, ''),
			(1, 2, 're', 'Status', 'Picklist-Pick One', '', false, 2, '', '', 0, 'normal')`,
		"INSERT INTO field_options VALUES (1, 2, 1, 'A', '', 1, false), (1, 2, 2, 'B', '', 2, false)",
		`INSERT INTO records VALUES (1, 're', 3, 1, 10, 1, 10, 1, 0, '', '{"1":"Old","2":"2"}'),
			(1, 're', 4, 1, 10, 1, 10, 1, 0, '', '{"1":"Other","2":"1"}')`,
		"INSERT INTO terms VALUES (1, 're', 1, 'old', 3), (1, 're', 2, '2', 3), (1, 're', 1, 'other', 4), (1, 're', 2, '1', 4)",
		"INSERT INTO counters VALUES (1, 're', 4)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)

	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	status2 := core.Condition{Attr: "field_2", Op: '=', Value: "2", FieldID: 2, Int: 2}
	for _, tc := range []struct {
		cond core.Condition
		want int64
	}{
		{status2, 3},
		{core.Condition{Attr: "field_2", Op: '=', Value: "1", FieldID: 2, Int: 1}, 4},
		{core.Condition{Attr: "field_1", Op: '=', Value: "OLD", FieldID: 1}, 3},
	} {
		ms, err := s.Search(ctx, 1, "re", []core.Condition{tc.cond})
		if err != nil {
			t.Fatalf("Search(%s): %v", tc.cond, err)
		}
		if len(ms) != 1 || ms[0].ID != tc.want {
			t.Errorf("Search(%s) = %+v, want record %d", tc.cond, ms, tc.want)
		}
	}
	r, err := s.CreateRecord(ctx, 1, core.Record{Kind: "re", CreatedBy: 1, CreatedTime: 20,
		Values: map[int64]string{2: "2"}})
	if err != nil {
		t.Fatalf("CreateRecord: %v", err)
	}
	if _, err := s.UpdateRecord(ctx, 1, "re", 3, core.Update{UserID: 1, Time: 30,
		Values: map[int64]string{2: "1"}}); err != nil {
		t.Fatalf("UpdateRecord: %v", err)
	}
	ms, err := s.Search(ctx, 1, "re", []core.Condition{status2})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(ms) != 1 || ms[0].ID != r.ID {
		t.Errorf("after a create and an update: %+v, want record %d alone", ms, r.ID)
	}
}
