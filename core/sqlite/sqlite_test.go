package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/core/storetest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return st
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store {
		return open(t, filepath.Join(t.TempDir(), "core.db"))
	})
}

func TestOpenCreatesParentDirs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "core.db")
	st := open(t, path)
	defer st.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file: %v", err)
	}
}

func TestOpenBadPath(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "a?b.db")} {
		if st, err := sqlite.Open(context.Background(), path); err == nil {
			st.Close()
			t.Errorf("Open(%q): no error", path)
		}
	}
}

// TestReopen checks that everything written survives Close and Open, and that migrating an up-to-date file
// is a no-op.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "core.db")
	st := open(t, path)
	if err := st.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	a, err := st.Account(ctx, "acme")
	if err != nil {
		t.Fatalf("Account: %v", err)
	}
	r, err := st.CreateRecord(ctx, a.ID, core.Record{Kind: "re", CreatedBy: 5, CreatedTime: 1700000500,
		Values: map[int64]string{101: "Survivor", 103: "2"}})
	if err != nil {
		t.Fatalf("CreateRecord: %v", err)
	}
	if _, err := st.UpdateRecord(ctx, a.ID, "re", r.ID, core.Unconditional(core.Update{UserID: 6, Time: 1700000600,
		Values: map[int64]string{103: "3"}})); err != nil {
		t.Fatalf("UpdateRecord: %v", err)
	}
	if err := st.DeleteRecord(ctx, a.ID, "re", 2, 5, 1700000700, nil); err != nil {
		t.Fatalf("DeleteRecord: %v", err)
	}
	before := storetest.Snapshot(t, st, "acme")
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i := range 2 {
		st = open(t, path)
		if got := storetest.Snapshot(t, st, "acme"); got != before {
			t.Errorf("after reopen #%d:\n got %s\nwant %s", i+1, got, before)
		}
		if err := st.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}

const crashEnv = "REQGATE_SQLITE_CRASH_DB"

// TestCrash runs a child process (this test binary, in TestCrashChild) that writes records as fast as it can
// and prints the id of each acknowledged write; it is killed with SIGKILL in the middle of writing. Every
// write it acknowledged must be in the file afterwards.
func TestCrash(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "core.db")
	st := open(t, path)
	if err := st.Apply(ctx, storetest.Fixture()); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	st.Close()

	cmd, out := testsupport.Child(t, "TestCrashChild", crashEnv+"="+path)
	acked := map[int64]string{} // record id -> the version comment it was written with
	updated := map[int64]string{}
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		// Lines: "create <id> <title>" or "update <id> <title>", printed after the store acknowledged.
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		id, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatalf("child printed %q", sc.Text())
		}
		switch f[0] {
		case "create":
			acked[id] = f[2]
		case "update":
			updated[id] = f[2]
		}
		if !killed && len(acked) >= 300 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("kill child: %v", err)
			}
			killed = true // keep reading: lines already printed were acknowledged before the kill
		}
	}
	err := cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed (%d writes): %v", len(acked), err)
	}

	st = open(t, path)
	defer st.Close()
	a, err := st.Account(ctx, "acme")
	if err != nil {
		t.Fatalf("Account after crash: %v", err)
	}
	for id, title := range acked {
		if u, ok := updated[id]; ok {
			title = u
		}
		r, err := st.Record(ctx, a.ID, "bug", id)
		if err != nil {
			t.Errorf("acknowledged record bug %d lost: %v", id, err)
			continue
		}
		if got := r.VersionComment; got != title {
			t.Errorf("record bug %d: version comment %q, want %q", id, got, title)
		}
	}
	t.Logf("%d creates and %d updates acknowledged before SIGKILL; all present after reopen", len(acked), len(updated))
}

// TestCrashChild is the writer of TestCrash; it does nothing unless TestCrash started it.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		return
	}
	ctx := context.Background()
	st := open(t, path)
	a, err := st.Account(ctx, "acme")
	if err != nil {
		t.Fatalf("Account: %v", err)
	}
	for i := 0; ; i++ {
		title := fmt.Sprintf("t%d", i)
		r, err := st.CreateRecord(ctx, a.ID, core.Record{Kind: "bug", CreatedBy: 5, CreatedTime: 1700000000,
			VersionComment: title})
		if err != nil {
			t.Fatalf("CreateRecord: %v", err)
		}
		fmt.Fprintf(os.Stdout, "create %d %s\n", r.ID, title)
		if i%3 == 0 {
			title += "u"
			c := title
			if _, err := st.UpdateRecord(ctx, a.ID, "bug", r.ID, core.Unconditional(core.Update{UserID: 5, Time: 1700000001,
				VersionComment: &c})); err != nil {
				t.Fatalf("UpdateRecord: %v", err)
			}
			fmt.Fprintf(os.Stdout, "update %d %s\n", r.ID, title)
		}
	}
}

// TestManyTerms writes a record whose multiple picklist selects 700 options: more index terms than one
// statement may bind.
func TestManyTerms(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), "core.db"))
	defer st.Close()
	opts := make([]core.Option, 700)
	all := make([]string, len(opts))
	for i := range opts {
		opts[i] = core.Option{Value: int64(i + 1), Label: strconv.Itoa(i + 1)}
		all[i] = strconv.Itoa(i + 1)
	}
	p := &core.Provision{Accounts: []core.AccountSpec{{APIKey: "k", Users: []core.UserSpec{{User: core.User{ID: 1,
		Username: "u"}}}, Fields: map[string][]core.Field{"re": {{ID: 1, Label: "Many", Type: core.TypePickMultiple,
		Options: opts}}}}}}
	if err := st.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	a, err := st.Account(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.CreateRecord(ctx, a.ID, core.Record{Kind: "re", CreatedBy: 1, CreatedTime: 1,
		Values: map[int64]string{1: strings.Join(all, ",")}})
	if err != nil {
		t.Fatalf("CreateRecord: %v", err)
	}
	find := func(v int64) int {
		ms, err := st.Search(ctx, a.ID, "re", []core.Condition{{Attr: "field_1", Op: '=', FieldID: 1, Int: v,
			Value: strconv.FormatInt(v, 10), Multi: true}})
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		return len(ms)
	}
	if got, want := find(650), 1; got != want {
		t.Errorf("records holding option 650: %d, want %d", got, want)
	}
	if _, err := st.UpdateRecord(ctx, a.ID, "re", r.ID, core.Unconditional(core.Update{UserID: 1, Time: 2,
		Values: map[int64]string{1: "3,650"}})); err != nil {
		t.Fatalf("UpdateRecord: %v", err)
	}
	for _, tc := range []struct {
		option int64
		want   int
	}{{650, 1}, {3, 1}, {4, 0}, {700, 0}} {
		if got := find(tc.option); got != tc.want {
			t.Errorf("after update, records holding option %d: %d, want %d", tc.option, got, tc.want)
		}
	}
}
