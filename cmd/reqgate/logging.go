package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/internal/tick"
)

// newLogger builds the process logger from log.level and log.format (text or json). Lines go through a
// logWriter, so the gateway's access log (one line per request) costs a buffer copy, not a write system call.
// The access logger batches (close it before the logWriter).
//
// The level is the returned LevelVar, which a reload sets (log.level is live). The access logger writes the
// gateway's access log into the same writer in the same format; the gateway uses it only while the level lets
// info through, which turns the access log off above info. The logger also becomes slog's default and,
// through redisLogger, go-redis's.
func newLogger(c config.Log, w io.Writer) (*slog.Logger, *logWriter, *accesslog.Logger, *slog.LevelVar) {
	level := new(slog.LevelVar)
	level.Set(parseLevel(c.Level))
	lw := newLogWriter(w, 100*time.Millisecond)
	opts := &slog.HandlerOptions{Level: level}
	format := "text"
	var h slog.Handler = slog.NewTextHandler(lw, opts)
	if strings.EqualFold(c.Format, "json") {
		format = "json"
		h = slog.NewJSONHandler(lw, opts)
	}
	l := slog.New(h)
	slog.SetDefault(l)
	redis.SetLogger(redisLogger{l.With("part", "redis")})
	access := accesslog.New(infoLines{lw}, format, "part", "gateway")
	// Each connection's lines reach lw in batches (accesslog's batch.go), as often as lw hands its buffer on.
	access.Batch(100 * time.Millisecond)
	return l, lw, access, level
}

// parseLevel reads log.level (validated by package config); anything else is info.
func parseLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// logWriter gathers log lines in a buffer and hands full buffers to a goroutine of its own that writes them, so
// that a request never waits on the log's destination: a write to a file can stall for tens of milliseconds
// while the kernel writes back dirty pages, which, done under the buffer's lock, would hold up every request
// logging at that moment. Up to logBuffers buffers wait for the writer; past that, lines wait for it (nothing is
// dropped). A line is handed over every interval, when a buffer fills, and on Flush and Close. A line of warning
// level or above is written before Write returns (see Write), so an operator never waits for an error.
type logWriter struct {
	mu     sync.Mutex
	cur    []byte         // lines being gathered
	full   chan logChunk  // to the writer, in order
	free   chan []byte    // empty buffers back from the writer
	w      io.Writer      // written by the writer goroutine only, until Close
	closed bool           // after Close lines are written directly
	stop   chan struct{}  // ends the ticker
	done   chan struct{}  // the ticker and the writer have ended
	wrote  sync.WaitGroup // the writer goroutine
}

// logChunk is a buffer to write, or (ack set) a request to signal once everything before it is written.
type logChunk struct {
	b   []byte
	ack chan struct{}
}

const (
	logBufferSize = 64 << 10
	logBuffers    = 16 // 1 MiB of lines may wait for a slow destination before a request waits for it
)

func newLogWriter(w io.Writer, interval time.Duration) *logWriter {
	lw := &logWriter{cur: make([]byte, 0, logBufferSize), full: make(chan logChunk, logBuffers+1),
		free: make(chan []byte, logBuffers), w: w, stop: make(chan struct{}), done: make(chan struct{})}
	for range logBuffers - 1 {
		lw.free <- make([]byte, 0, logBufferSize)
	}
	lw.wrote.Add(1)
	go lw.writeOut()
	go func() {
		defer close(lw.done)
		tick.Every(lw.stop, interval, func() {
			lw.mu.Lock()
			lw.handOff()
			lw.mu.Unlock()
		})
	}()
	return lw
}

// writeOut writes the buffers handed over, in order, and gives them back.
func (lw *logWriter) writeOut() {
	defer lw.wrote.Done()
	for c := range lw.full {
		if c.ack != nil {
			close(c.ack)
			continue
		}
		_, _ = lw.w.Write(c.b)
		lw.free <- c.b[:0]
	}
}

// handOff passes the gathered lines to the writer and takes an empty buffer; mu is held. When every buffer is
// waiting for the writer it waits for one to come back.
func (lw *logWriter) handOff() {
	if len(lw.cur) == 0 || lw.closed {
		return
	}
	lw.full <- logChunk{b: lw.cur}
	lw.cur = <-lw.free
}

// add appends one line; mu is held.
func (lw *logWriter) add(p []byte) (int, error) {
	if lw.closed {
		return lw.w.Write(p)
	}
	if len(lw.cur)+len(p) > cap(lw.cur) {
		lw.handOff()
	}
	lw.cur = append(lw.cur, p...)
	return len(p), nil
}

// Write appends one log line. slog handlers write each record with a single Write call.
func (lw *logWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	n, err := lw.add(p)
	if err != nil || !urgent(p) {
		lw.mu.Unlock()
		return n, err
	}
	ack := lw.flushLocked()
	lw.mu.Unlock()
	<-ack
	return n, nil
}

// infoLines writes lines known to be of level info (the access log) into a logWriter, without looking for
// an urgent level in each: they are written with the others.
type infoLines struct{ lw *logWriter }

func (w infoLines) Write(p []byte) (int, error) {
	w.lw.mu.Lock()
	defer w.lw.mu.Unlock()
	return w.lw.add(p)
}

// urgent reports whether a log line is a warning or an error (text or JSON handler form). The level comes
// after the time, within the first 96 bytes.
func urgent(p []byte) bool {
	p = p[:min(len(p), 96)]
	return bytes.Contains(p, []byte("level=WARN")) || bytes.Contains(p, []byte("level=ERROR")) ||
		bytes.Contains(p, []byte(`"level":"WARN"`)) || bytes.Contains(p, []byte(`"level":"ERROR"`))
}

// flushLocked hands the gathered lines over and returns a channel closed once the writer has written them and
// everything before; mu is held.
func (lw *logWriter) flushLocked() <-chan struct{} {
	ack := make(chan struct{})
	if lw.closed {
		close(ack)
		return ack
	}
	lw.handOff()
	lw.full <- logChunk{ack: ack}
	return ack
}

// Flush writes out what is gathered and waits until it is written.
func (lw *logWriter) Flush() {
	lw.mu.Lock()
	ack := lw.flushLocked()
	lw.mu.Unlock()
	<-ack
}

// Close writes out what is gathered and stops the ticker and the writer; lines written afterwards go straight
// to the destination.
func (lw *logWriter) Close() {
	lw.mu.Lock()
	if lw.closed {
		lw.mu.Unlock()
		return
	}
	lw.handOff()
	lw.closed = true
	close(lw.full)
	lw.wrote.Wait() // the writer takes no lock, and a buffer always has room in free
	lw.mu.Unlock()
	close(lw.stop)
	<-lw.done
}

// redisLogger routes go-redis's own messages (a pool that cannot dial while Redis is down, a connection with
// unread data) through slog at warning level, so that every line the process writes is in log.format. Without
// it go-redis prints plain "redis: <date> pool.go:NNN: ..." lines to stderr, which a JSON log pipeline cannot
// parse.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
}

// requestLog writes one line per request the core answers, at info level through log (the process logger, so
// it takes log.format and log.level like the gateway's access log): msg "request", the X-Request-Id the gateway
// forwards (or the caller sent), method, path (without the query, which may hold search terms), status,
// duration_ms and, when the request is traced, trace_id.
func requestLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !log.Enabled(r.Context(), slog.LevelInfo) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &api.StatusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status := sw.Status()
		attrs := []slog.Attr{
			slog.String("request_id", clipID(r.Header.Get("X-Request-Id"))),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		}
		if id := traceID(r.Context()); id != "" {
			attrs = append(attrs, slog.String("trace_id", id))
		}
		log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	})
}

// clipID bounds a request id taken from a header, so a client cannot make one log line arbitrarily long.
func clipID(id string) string {
	const max = 128
	if len(id) > max {
		return id[:max]
	}
	return id
}
