package accesslog

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testsupport"
)

// syncWriter records the Writes it gets, as the process's log writer takes them: one line or one batch each.
type syncWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestBatchKeepsEveryLine: connections logging at once, batched, lose no line and break none; each
// connection's lines stay in its order; Close writes what is still gathered; and the batches are fewer
// writes than lines.
func TestBatchKeepsEveryLine(t *testing.T) {
	w := new(syncWriter)
	l := New(w, "json", "part", "gateway")
	l.Batch(time.Hour) // no tick during the test: only full batches and Close write
	const conns, lines = 8, 500
	var wg sync.WaitGroup
	for c := range conns {
		wg.Go(func() {
			var m Memo
			for i := range lines {
				e := Entry{RequestID: fmt.Sprintf("c%d-%d", c, i), Method: "GET", Path: "/api2/demo/re/1", Status: 200}
				if err := l.LogWith(time.Now(), &e, &m); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	out := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	if len(out) != conns*lines {
		t.Fatalf("%d lines, want %d", len(out), conns*lines)
	}
	next := make([]int, conns)
	for _, line := range out {
		var c, i int
		if _, err := fmt.Sscanf(line[strings.Index(line, `"request_id":"`)+len(`"request_id":"`):], "c%d-%d", &c, &i); err != nil ||
			!strings.HasPrefix(line, `{"time":"`) || !strings.HasSuffix(line, "}") {
			t.Fatalf("broken line %q (%v)", line, err)
		}
		if i != next[c] {
			t.Fatalf("connection %d: line %d after line %d", c, i, next[c]-1)
		}
		next[c]++
	}
	if w.writes >= conns*lines/4 {
		t.Errorf("%d writes for %d lines: not batched", w.writes, conns*lines)
	}
	// After Close a line is written at once.
	var m Memo
	if err := l.LogWith(time.Now(), &Entry{RequestID: "after-close"}, &m); err != nil || !strings.Contains(w.String(), "after-close") {
		t.Errorf("a line after Close was not written at once (%v)", err)
	}
}

// TestBatchReachesWriterAlone: a connection's single line, with no more traffic behind it, reaches the
// writer by the tick; then the quiet connection holds no buffer.
func TestBatchReachesWriterAlone(t *testing.T) {
	w := new(syncWriter)
	l := New(w, "text")
	l.Batch(10 * time.Millisecond)
	defer l.Close()
	var m Memo
	if err := l.LogWith(time.Now(), &Entry{RequestID: "lonely"}, &m); err != nil {
		t.Fatal(err)
	}
	if !testsupport.WaitUntil(10*time.Second, func() bool { return strings.Contains(w.String(), "request_id=lonely") }) {
		t.Fatalf("the line never reached the writer: %q", w.String())
	}
	if !testsupport.WaitUntil(10*time.Second, func() bool {
		m.batch.mu.Lock()
		defer m.batch.mu.Unlock()
		return m.batch.b == nil && !m.batch.queued
	}) {
		t.Error("the quiet connection keeps its buffer")
	}
}

// TestUnbatchedWritesAtOnce: without Batch, a line with a Memo is written by LogWith itself.
func TestUnbatchedWritesAtOnce(t *testing.T) {
	w := new(syncWriter)
	l := New(w, "json")
	var m Memo
	if err := l.LogWith(time.Now(), &Entry{RequestID: "now"}, &m); err != nil || !strings.Contains(w.String(), `"request_id":"now"`) {
		t.Fatalf("line not written at once: %q (%v)", w.String(), err)
	}
	l.Close() // no Batch: nothing to stop
}
