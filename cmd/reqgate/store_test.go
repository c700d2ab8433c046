package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/core/storetest"
)

// runCmd runs the reqgate command line in process and returns its exit code and output.
func runCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(context.Background(), args, nil, &out, &out)
	return code, out.String()
}

// seedSQLite fills a SQLite store with the demo account (and its history), the storetest fixture, and some
// more life: creates, updates (history), a delete of a created record.
func seedSQLite(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Apply(ctx, accounts.Demo()); err != nil {
		t.Fatal(err)
	}
	if err := accounts.SeedDemoHistory(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatal(err)
	}
	acme, err := st.Account(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		r, err := st.CreateRecord(ctx, acme.ID, core.Record{Kind: "re", CreatedBy: 5, CreatedTime: 1_700_001_000 + int64(i),
			Values: map[int64]string{101: fmt.Sprintf("Created %d", i), 103: "1", 105: "1,2"}})
		if err != nil {
			t.Fatal(err)
		}
		comment := "second thoughts"
		if _, err := st.UpdateRecord(ctx, acme.ID, "re", r.ID, core.Unconditional(core.Update{UserID: 5, Time: r.CreatedTime + 60,
			VersionComment: &comment, Values: map[int64]string{103: "2", 102: "<p>now with text</p>"}})); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			if err := st.DeleteRecord(ctx, acme.ID, "re", r.ID, 5, r.CreatedTime+120, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A created-then-deleted record as the newest of its kind: the counter must still skip its id.
	r, err := st.CreateRecord(ctx, acme.ID, core.Record{Kind: "bug", CreatedBy: 5, CreatedTime: 1_700_002_000})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRecord(ctx, acme.ID, "bug", r.ID, 5, 1_700_002_001, nil); err != nil {
		t.Fatal(err)
	}
}

// compareStores checks that every Store read of account apiKey answers the same on a and b: the account,
// users, objects, the fields and views of every kind, every record (deleted ones too), the history of every
// field of every record, related records, and searches of live and deleted records.
func compareStores(t *testing.T, a, b core.Store, apiKey string) (records int) {
	t.Helper()
	ctx := context.Background()
	same := func(what string, x, y any) {
		t.Helper()
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s %s differs:\nsource %+v\ntarget %+v", apiKey, what, x, y)
		}
	}
	aa, err := a.Account(ctx, apiKey)
	if err != nil {
		t.Fatal(err)
	}
	ba, err := b.Account(ctx, apiKey)
	if err != nil {
		t.Fatalf("target: %v", err)
	}
	same("account name", aa.Name, ba.Name)
	au, _ := a.Users(ctx, aa.ID)
	bu, _ := b.Users(ctx, ba.ID)
	same("users", au, bu)
	for _, u := range au {
		x, _ := a.UserByName(ctx, aa.ID, u.Username)
		y, _ := b.UserByName(ctx, ba.ID, u.Username)
		same("user "+u.Username, x, y)
	}
	ao, _ := a.Objects(ctx, aa.ID)
	bo, _ := b.Objects(ctx, ba.ID)
	same("objects", ao, bo)
	for _, o := range ao {
		kind := o.APIPrefix
		af, _ := a.Fields(ctx, aa.ID, kind)
		bf, _ := b.Fields(ctx, ba.ID, kind)
		same("fields of "+kind, af, bf)
		av, _ := a.Views(ctx, aa.ID, kind)
		bv, _ := b.Views(ctx, ba.ID, kind)
		same("views of "+kind, av, bv)
		live, err := a.Search(ctx, aa.ID, kind, nil)
		if err != nil {
			t.Fatal(err)
		}
		blive, _ := b.Search(ctx, ba.ID, kind, nil)
		same("live records of "+kind, live, blive)
		del := []core.Condition{{Attr: "deleted_time", Op: '>', Value: "0"}}
		deleted, err := a.Search(ctx, aa.ID, kind, del)
		if err != nil {
			t.Fatal(err)
		}
		bdeleted, _ := b.Search(ctx, ba.ID, kind, del)
		same("deleted records of "+kind, deleted, bdeleted)
		for _, f := range af {
			if f.IsPicklist() {
				for _, opt := range f.Options {
					c := []core.Condition{{Attr: f.Name(), Op: '=', Value: fmt.Sprint(opt.Value), FieldID: f.ID,
						Int: opt.Value, Multi: f.Type == core.TypePickMultiple}}
					x, _ := a.Search(ctx, aa.ID, kind, c)
					y, _ := b.Search(ctx, ba.ID, kind, c)
					same("search "+c[0].String()+" of "+kind, x, y)
				}
			}
		}
		for _, m := range append(live, deleted...) {
			records++
			x, err := a.Record(ctx, aa.ID, kind, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			y, err := b.Record(ctx, ba.ID, kind, m.ID)
			if err != nil {
				t.Errorf("target record %s %d: %v", kind, m.ID, err)
				continue
			}
			same(fmt.Sprintf("record %s %d", kind, m.ID), x, y)
			xr, xerr := a.Related(ctx, aa.ID, kind, m.ID)
			yr, yerr := b.Related(ctx, ba.ID, kind, m.ID)
			same(fmt.Sprintf("related of %s %d", kind, m.ID), xr, yr)
			same(fmt.Sprintf("related error of %s %d", kind, m.ID), xerr != nil, yerr != nil)
			for _, f := range af {
				xh, _ := a.History(ctx, aa.ID, kind, m.ID, f.ID)
				yh, _ := b.History(ctx, ba.ID, kind, m.ID, f.ID)
				same(fmt.Sprintf("history of %s %d field %d", kind, m.ID, f.ID), xh, yh)
			}
		}
	}
	return records
}

// TestStoreCopySQLiteToPostgres copies every account of a lived-in SQLite file into PostgreSQL with
// `reqgate store copy` and compares every read, record by record; then checks that the copy refuses an
// account the target holds unless --replace, that ids continue where the source left them, and that a copy
// back into a new SQLite file reads the same as the source.
func TestStoreCopySQLiteToPostgres(t *testing.T) {
	src := filepath.Join(t.TempDir(), "core.db")
	seedSQLite(t, src)
	dst := pgtest.Shared(t).NewDatabase(t)

	if code, out := runCmd(t, "store", "migrate", "--db", dst); code != 0 {
		t.Fatalf("store migrate: exit %d\n%s", code, out)
	}
	code, out := runCmd(t, "store", "copy", "--from", src, "--to", dst)
	if code != 0 {
		t.Fatalf("store copy: exit %d\n%s", code, out)
	}
	if got, want := strings.Count(out, "copied account"), 3; got != want { // demo, acme, other
		t.Errorf("copy reported %d accounts, want %d:\n%s", got, want, out)
	}

	ctx := context.Background()
	a, err := openStore(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := openStore(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, key := range []string{"demo", "acme", "other"} {
		n := compareStores(t, a, b, key)
		t.Logf("account %s: %d records compared", key, n)
	}
	// The snapshots agree too (this covers the id counters, which no read shows).
	for _, key := range []string{"demo", "acme", "other"} {
		x, err := a.(core.Exporter).Export(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.(core.Exporter).Export(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		x, y = normalise(x), normalise(y)
		xv, yv := reflect.ValueOf(*x), reflect.ValueOf(*y)
		for i := range xv.NumField() {
			if !reflect.DeepEqual(xv.Field(i).Interface(), yv.Field(i).Interface()) {
				t.Errorf("snapshots of %s differ in %s:\nsource %+v\ntarget %+v", key, xv.Type().Field(i).Name,
					xv.Field(i).Interface(), yv.Field(i).Interface())
			}
		}
	}

	// The next created record takes the id after the source's last one (bug 1 was created, then deleted).
	acme, _ := b.Account(ctx, "acme")
	r, err := b.CreateRecord(ctx, acme.ID, core.Record{Kind: "bug", CreatedBy: 5, CreatedTime: 1_700_003_000})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.ID, int64(2); got != want {
		t.Errorf("first id created after the copy = %d, want %d", got, want)
	}

	// Copying again is refused (the target holds the account) and changes nothing...
	if code, out := runCmd(t, "store", "copy", "--from", src, "--to", dst, "--account", "acme"); code == 0 ||
		!strings.Contains(out, "--replace") {
		t.Errorf("second copy without --replace: exit %d, want a refusal naming --replace:\n%s", code, out)
	}
	if _, err := b.Record(ctx, acme.ID, "bug", 2); err != nil {
		t.Errorf("the refused copy changed the target: %v", err)
	}
	// ...unless --replace: then the target is the source again.
	if code, out := runCmd(t, "store", "copy", "--from", src, "--to", dst, "--account", "acme", "--replace"); code != 0 {
		t.Fatalf("copy --replace: exit %d\n%s", code, out)
	}
	if _, err := b.Record(ctx, acme.ID, "bug", 2); err == nil {
		t.Error("copy --replace kept a record the source does not have")
	}
	compareStores(t, a, b, "acme")

	// And back: PostgreSQL to a new SQLite file gives the source again.
	back := filepath.Join(t.TempDir(), "back.db")
	if code, out := runCmd(t, "store", "copy", "--from", dst, "--to", back); code != 0 {
		t.Fatalf("copy back to SQLite: exit %d\n%s", code, out)
	}
	c, err := openStore(ctx, back)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, key := range []string{"demo", "acme", "other"} {
		compareStores(t, a, c, key)
	}
}

// normalise sorts what the stores may list in different orders, and makes empty lists nil.
func normalise(s *core.Snapshot) *core.Snapshot {
	c := *s
	c.Views, c.History, c.Relationships = nilIfEmpty(c.Views), nilIfEmpty(c.History), nilIfEmpty(c.Relationships)
	c.Objects = append([]core.Object(nil), s.Objects...)
	sortBy(c.Objects, func(o core.Object) string { return o.APIPrefix })
	c.Fields = append([]core.Field(nil), s.Fields...)
	sortBy(c.Fields, func(f core.Field) string { return fmt.Sprintf("%s %020d", f.Kind, f.ID) })
	return &c
}

func sortBy[T any](xs []T, key func(T) string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && key(xs[j]) < key(xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func TestStoreCommandUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"store"}, 2, "reqgate store copy"},
		{"help", []string{"store", "--help"}, 0, "reqgate store migrate"},
		{"unknown", []string{"store", "shrink"}, 2, `unknown subcommand "shrink"`},
		{"migrate without db", []string{"store", "migrate"}, 2, "--db is required"},
		{"copy without to", []string{"store", "copy", "--from", "a.db"}, 2, "--from and --to are required"},
		{"copy onto itself", []string{"store", "copy", "--from", "a.db", "--to", "a.db"}, 2, "same store"},
		{"bad flag", []string{"store", "copy", "--frm", "a.db"}, 2, "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runCmd(t, tc.args...)
			if got, want := code, tc.code; got != want {
				t.Errorf("exit code = %d, want %d\n%s", got, want, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

func nilIfEmpty[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// TestStoreCopyFromMissingSource checks that a source that is not there is an error: nothing is created at
// the source path or at the target, and no "0 account(s) copied" success.
func TestStoreCopyFromMissingSource(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, from string }{
		{"missing file", filepath.Join(dir, "typo.db")},
		{"missing directory", filepath.Join(dir, "data", "reqgate.db")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			to := filepath.Join(dir, "target-"+strings.ReplaceAll(tc.name, " ", "-"), "copy.db")
			code, out := runCmd(t, "store", "copy", "--from", tc.from, "--to", to)
			if code != 1 {
				t.Errorf("exit code = %d, want 1\n%s", code, out)
			}
			if want := "source: open sqlite store " + tc.from + ": no such file"; !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
			if strings.Contains(out, "copied") {
				t.Errorf("output reports a copy:\n%s", out)
			}
			for _, p := range []string{tc.from, filepath.Dir(tc.from), filepath.Dir(to)} {
				if p == dir {
					continue
				}
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s exists after the refused copy (%v)", p, err)
				}
			}
		})
	}
}
