package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/sqlite"
	"golang.org/x/crypto/bcrypt"
)

// openStore opens a private SQLite store in a temporary directory.
func openStore(t *testing.T) core.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db", "reqgate.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// snapshot renders everything the API can read of the accounts as text (password hashes left out), so two
// states compare with ==.
func snapshot(t *testing.T, st core.Store, apiKeys ...string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
	}
	for _, key := range apiKeys {
		acct, err := st.Account(ctx, key)
		if errors.Is(err, core.ErrNotFound) {
			fmt.Fprintf(&b, "account %s: none\n", key)
			continue
		}
		must(err)
		fmt.Fprintf(&b, "account %s %q\n", acct.APIKey, acct.Name)
		users, err := st.Users(ctx, acct.ID)
		must(err)
		for _, u := range users {
			u.PasswordHash = nil
			fmt.Fprintf(&b, "user %+v\n", u)
		}
		objs, err := st.Objects(ctx, acct.ID)
		must(err)
		for _, o := range objs {
			fmt.Fprintf(&b, "object %+v\n", o)
			fields, err := st.Fields(ctx, acct.ID, o.APIPrefix)
			must(err)
			for _, f := range fields {
				fmt.Fprintf(&b, "  field %+v\n", f)
			}
			views, err := st.Views(ctx, acct.ID, o.APIPrefix)
			must(err)
			for _, v := range views {
				fmt.Fprintf(&b, "  view %+v\n", v)
			}
			sums, err := st.Search(ctx, acct.ID, o.APIPrefix, nil)
			must(err)
			for _, s := range sums {
				rec, err := st.Record(ctx, acct.ID, o.APIPrefix, s.ID)
				must(err)
				fmt.Fprintf(&b, "  record %+v\n", rec)
				rels, err := st.Related(ctx, acct.ID, o.APIPrefix, s.ID)
				must(err)
				for _, r := range rels {
					fmt.Fprintf(&b, "    related %s %s %d\n", r.Type, r.Kind, r.ID)
				}
			}
		}
	}
	return b.String()
}

func apply(t *testing.T, st core.Store, p *core.Provision) {
	t.Helper()
	if err := st.Apply(context.Background(), p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

// contractPlus is the contract's example file with a second file that seeds RSK-3, the custom record the
// example links to without seeding it.
func contractPlus(t *testing.T) *core.Provision {
	t.Helper()
	extra := filepath.Join(t.TempDir(), "extra.yaml")
	doc := "accounts:\n  - api_key: acme-7f3a\n    records:\n      - {kind: risk, id: 3, created_by: bob, fields: {field_301: Vendor lock-in, field_302: 2}}\n"
	if err := os.WriteFile(extra, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := accounts.LoadFiles("testdata/contract.yaml", extra)
	if err != nil {
		t.Fatalf("LoadFiles: %v", err)
	}
	return p
}

func TestApplyTwiceGivesTheSameState(t *testing.T) {
	st := openStore(t)
	p := contractPlus(t)
	apply(t, st, p)
	first := snapshot(t, st, "acme-7f3a")
	if !strings.Contains(first, "related Is Related To risk 3") || !strings.Contains(first, "Export to CSV") {
		t.Fatalf("the example did not land:\n%s", first)
	}
	apply(t, st, p)
	if second := snapshot(t, st, "acme-7f3a"); second != first {
		t.Errorf("state after the second Apply differs:\n--- first\n%s\n--- second\n%s", first, second)
	}
	// Parsed again: new salts, same state, and the password still verifies.
	apply(t, st, contractPlus(t))
	if third := snapshot(t, st, "acme-7f3a"); third != first {
		t.Errorf("state after applying a fresh parse differs:\n--- first\n%s\n--- third\n%s", first, third)
	}
	acct, err := st.Account(context.Background(), "acme-7f3a")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := st.UserByName(context.Background(), acct.ID, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := bcrypt.CompareHashAndPassword(alice.PasswordHash, []byte("alice-secret")); err != nil {
		t.Errorf("stored hash does not verify alice's password: %v", err)
	}
	bob, err := st.UserByName(context.Background(), acct.ID, "bob")
	if err != nil || bob.ID == 0 {
		t.Errorf("bob = %+v, %v; want an assigned id", bob, err)
	}
}

func TestBadFileChangesNothing(t *testing.T) {
	st := openStore(t)
	apply(t, st, accounts.Demo())
	before := snapshot(t, st, "demo", "acme-7f3a")

	// Refused by Parse: nothing reaches the store.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	doc := "accounts:\n  - api_key: demo\n    name: Demo renamed\n    users:\n      - {username: demo, password: \"\"}\n"
	if err := os.WriteFile(bad, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := accounts.LoadFiles(bad); err == nil || p != nil {
		t.Fatalf("LoadFiles(bad) = %v, %v; want a refusal", p, err)
	}

	// Refused by the store (a relationship to a kind the account lacks, which Parse would have refused
	// too): the whole Apply is rolled back, including the demo's rename that comes first.
	data, err := os.ReadFile("testdata/contract.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := accounts.Parse("contract.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	p.Accounts = append([]core.AccountSpec{{APIKey: "demo", Name: "Demo renamed"}}, p.Accounts...)
	last := &p.Accounts[len(p.Accounts)-1]
	last.Relationships = append(last.Relationships, core.RelationshipSpec{FromKind: "re", FromID: 1,
		ToKind: "nope", ToID: 1, Type: "related"})
	if err := st.Apply(context.Background(), p); err == nil {
		t.Fatal("Apply accepted a link to a kind that does not exist")
	}
	if after := snapshot(t, st, "demo", "acme-7f3a"); after != before {
		t.Errorf("a refused Apply changed the store:\n--- before\n%s\n--- after\n%s", before, after)
	}
}

func TestDemoOnAnEmptyStore(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	empty, err := st.Empty(ctx)
	if err != nil || !empty {
		t.Fatalf("Empty() = %v, %v; want true", empty, err)
	}
	apply(t, st, accounts.Demo())
	if err := accounts.SeedDemoHistory(ctx, st); err != nil {
		t.Fatalf("SeedDemoHistory: %v", err)
	}
	acct, err := st.Account(ctx, accounts.DemoAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	demo, err := st.UserByName(ctx, acct.ID, "demo")
	if err != nil || bcrypt.CompareHashAndPassword(demo.PasswordHash, []byte("demo")) != nil {
		t.Fatalf("demo/demo cannot sign in: %+v, %v", demo, err)
	}
	// Every field of risk 1 and the changed fields of RE-1 have history; status of RE-1 changed twice.
	fields, err := st.Fields(ctx, acct.ID, "risk")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if f.Label == "Title" {
			continue
		}
		h, err := st.History(ctx, acct.ID, "risk", 1, f.ID)
		if err != nil || len(h) == 0 {
			t.Errorf("risk 1 %s (%s): history %v, %v; want entries", f.Name(), f.Type, h, err)
		}
	}
	reFields, err := st.Fields(ctx, acct.ID, "re")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range reFields {
		h, err := st.History(ctx, acct.ID, "re", 1, f.ID)
		want := 1
		if f.Label == "Status" {
			want = 2
		}
		if err != nil || len(h) != want {
			t.Errorf("re 1 %s: %d history entries (%v), want %d", f.Label, len(h), err, want)
		}
	}
	for _, kind := range []string{"re", "risk"} {
		views, err := st.Views(ctx, acct.ID, kind)
		if err != nil || len(views) != 1 {
			t.Errorf("views of %s = %v, %v; want 1", kind, views, err)
		}
	}
	rels, err := st.Related(ctx, acct.ID, "re", 1)
	if err != nil || len(rels) < 3 {
		t.Errorf("RE-1 related = %v, %v; want at least 3", rels, err)
	}
	conds, err := core.ParseConditions("deleted_time>1000000000")
	if err == nil {
		err = core.CheckConditions(conds, reFields)
	}
	if err != nil {
		t.Fatal(err)
	}
	deleted, err := st.Search(ctx, acct.ID, "re", conds)
	if err != nil || len(deleted) != 1 || deleted[0].ID != 13 {
		t.Errorf("deleted requirements = %v, %v; want RE-13", deleted, err)
	}
	if empty, err := st.Empty(ctx); err != nil || empty {
		t.Errorf("Empty() after the demo = %v, %v; want false", empty, err)
	}
}

// TestDemoHistorySeededOnce seeds the demo's history, deletes a demo record as a client would, then seeds
// the history again and applies the demo again, as a start that finds the demo already there might: no
// change is written twice, and RE-2 and RE-13 stay deleted.
func TestDemoHistorySeededOnce(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	apply(t, st, accounts.Demo())
	if err := accounts.SeedDemoHistory(ctx, st); err != nil {
		t.Fatalf("SeedDemoHistory: %v", err)
	}
	acct, err := st.Account(ctx, accounts.DemoAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRecord(ctx, acct.ID, "re", 2, 1, 1, nil); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, st, accounts.DemoAPIKey)
	history := func() []core.Change {
		t.Helper()
		h, err := st.History(ctx, acct.ID, "re", 1, 103)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	statusChanges := len(history())

	if err := accounts.SeedDemoHistory(ctx, st); err != nil {
		t.Errorf("SeedDemoHistory again: %v", err)
	}
	apply(t, st, accounts.Demo())
	if after := snapshot(t, st, accounts.DemoAPIKey); after != before {
		t.Errorf("seeding the demo again changed it:\n--- before\n%s\n--- after\n%s", before, after)
	}
	if n := len(history()); n != statusChanges {
		t.Errorf("RE-1 status history: %d changes after seeding again, want %d", n, statusChanges)
	}
	for _, id := range []int64{2, 13} {
		r, err := st.Record(ctx, acct.ID, "re", id)
		if err != nil || r.DeletedTime == 0 {
			t.Errorf("RE-%d after seeding again: %+v, %v; want it deleted", id, r, err)
		}
	}
}

// BenchmarkDemoStartup measures what an empty store costs `reqgate serve` beyond hashing: applying the demo
// account (cached after the first Demo call) to a new SQLite file and seeding its history.
func BenchmarkDemoStartup(b *testing.B) {
	ctx := context.Background()
	accounts.Demo() // hash once, outside the loop
	dir := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		st, err := sqlite.Open(ctx, filepath.Join(dir, fmt.Sprintf("demo%d.db", n)))
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Apply(ctx, accounts.Demo()); err != nil {
			b.Fatal(err)
		}
		if err := accounts.SeedDemoHistory(ctx, st); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}

// TestContractExampleApplies: the contract's own example file provisions an empty store. It links RE-1 to
// RSK-3 without seeding RSK-3; that link stays hidden until the record exists.
func TestContractExampleApplies(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	p, err := accounts.LoadFiles("testdata/contract.yaml")
	if err != nil {
		t.Fatal(err)
	}
	apply(t, st, p)
	acct, err := st.Account(ctx, "acme-7f3a")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := st.Related(ctx, acct.ID, "re", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rel) != 1 || rel[0].Kind != "ft" || rel[0].ID != 7 || rel[0].Type != core.RelParentOf {
		t.Fatalf("Related(RE-1) = %+v, want only FT-7 (Is Parent Of)", rel)
	}
}
