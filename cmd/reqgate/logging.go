package main

import (
	"bufio"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/reqgate/reqgate/config"
)

// newLogger builds the process logger from log.level and log.format (text or json). Lines go through a
// logWriter, so the gateway's access log (one line per request) costs a buffer copy, not a write system call.
func newLogger(c config.Log, w io.Writer) (*slog.Logger, *logWriter) {
	var level slog.Level
	switch strings.ToLower(c.Level) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	lw := newLogWriter(w, 100*time.Millisecond)
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(lw, opts)
	if strings.EqualFold(c.Format, "json") {
		h = slog.NewJSONHandler(lw, opts)
	}
	l := slog.New(h)
	slog.SetDefault(l)
	return l, lw
}

// logWriter buffers log lines and flushes them every interval, when the buffer fills, and on Close. A
// line of warning level or above is written at once (see Write), so an operator never waits for an error.
type logWriter struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newLogWriter(w io.Writer, interval time.Duration) *logWriter {
	lw := &logWriter{buf: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				lw.Flush()
			case <-lw.stop:
				lw.Flush()
				return
			}
		}
	}()
	return lw
}

// Write appends one log line. slog handlers write each record with a single Write call.
func (lw *logWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	n, err := lw.buf.Write(p)
	if err == nil && urgent(p) {
		err = lw.buf.Flush()
	}
	return n, err
}

// urgent reports whether a log line is a warning or an error (text or JSON handler form).
func urgent(p []byte) bool {
	s := string(p[:min(len(p), 96)])
	return strings.Contains(s, "level=WARN") || strings.Contains(s, "level=ERROR") ||
		strings.Contains(s, `"level":"WARN"`) || strings.Contains(s, `"level":"ERROR"`)
}

// Flush writes out what is buffered.
func (lw *logWriter) Flush() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_ = lw.buf.Flush()
}

// Close stops the flusher after a last flush.
func (lw *logWriter) Close() {
	select {
	case <-lw.stop:
	default:
		close(lw.stop)
	}
	<-lw.done
}
