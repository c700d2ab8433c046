package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/sqlite"
)

// TestProgressLog checks the progress of output that is not a terminal: a log line with the records done, the
// total and the rate each time the interval has passed (every call at interval 0), no bar.
func TestProgressLog(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress("copy", &buf, slog.New(slog.NewTextHandler(&buf, nil)))
	if p.out != nil {
		t.Fatal("bars on a buffer, which is not a terminal")
	}
	p.every = 0
	p.stage("a", 20)
	p.add(10)
	p.add(10)
	p.stage("b", 10)
	p.add(10)
	p.finish()
	out := buf.String()
	for i, want := range []string{"records=10 total=20", "records=20 total=20", "records=30 total=30"} {
		if !strings.Contains(out, "msg=\"copy progress\" "+want) {
			t.Errorf("line %d %q missing:\n%s", i, want, out)
		}
	}
	if !strings.Contains(out, "records_per_s=") {
		t.Errorf("no rate:\n%s", out)
	}
}

// TestProgressBar draws the bars into a buffer standing in for a terminal: one per stage, each with its name
// and its records done of its total, ended on a line of its own; a stage without records is filled too.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressBar("copy", &buf)
	p.stage(`copy "a"`, 40)
	p.add(15)
	p.add(25)
	p.stage(`copy "b"`, 0)
	p.stage(`copy "c"`, 60)
	p.add(60)
	p.finish()
	out := buf.String()
	for _, want := range []string{`copy "a"`, "40/40", `copy "b"`, "1/1", `copy "c"`, "60/60", "100%", "records"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
	if got := strings.Count(out, "\n"); got != 3 {
		t.Errorf("%d line ends, want one per bar:\n%q", got, out)
	}
	if p.done != 100 || p.total != 100 {
		t.Errorf("done %d of %d, want 100 of 100", p.done, p.total)
	}
}

// TestIsTerminal: files and pipes are not terminals, so they get log lines rather than a bar.
func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"file": f, "pipe": w, "buffer": &bytes.Buffer{}} {
		if isTerminal(out) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
}

// TestStoreCopyProgress copies a SQLite store to another: with the interval at 0 every imported batch logs a
// progress line to stderr, and stdout ends with the summary of all accounts with the time taken.
func TestStoreCopyProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 0
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	seedSQLite(t, src)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"store", "copy", "--from", src, "--to", filepath.Join(dir, "dst.db")},
		nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if got := strings.Count(stderr.String(), `msg="copy progress"`); got < 3 {
		t.Errorf("%d progress lines, want one per account at least:\n%s", got, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "3 account(s) copied in ") || !strings.Contains(last, "records/s): ") ||
		!strings.Contains(last, " users, ") || !strings.Contains(last, " records (") {
		t.Errorf("summary line %q", last)
	}
}

// TestApplyAccountFilesProgress applies an account file with seed records: at interval 0 each record logs a
// progress line, and the summary line counts what the file holds.
func TestApplyAccountFilesProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 0
	dir := t.TempDir()
	var y strings.Builder
	y.WriteString("accounts:\n  - api_key: big\n    name: Big\n    users:\n      - {id: 1, username: u, password: p, email: u@big.test, firstname: U, lastname: U}\n    records:\n")
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&y, "      - {kind: re, id: %d, created_by: u, fields: {field_101: \"R %d\"}}\n", i, i)
	}
	file := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(file, []byte(y.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "core.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	if err := applyAccountFiles(context.Background(), st, []string{file}, &buf, log); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if got := strings.Count(out, `msg="apply progress"`); got != 5 {
		t.Errorf("%d progress lines, want 5:\n%s", got, out)
	}
	if !strings.Contains(out, "records=5 total=5") {
		t.Errorf("no line for the last record:\n%s", out)
	}
	if !strings.Contains(out, `msg="account files applied"`) || !strings.Contains(out, "accounts=1 users=1") ||
		!strings.Contains(out, "records=5 relationships=0 elapsed=") {
		t.Errorf("summary missing or incomplete:\n%s", out)
	}
}
