package main

import (
	"bufio"
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
)

// newLogger builds the process logger from log.level and log.format (text or json). Lines go through a
// logWriter, so the gateway's access log (one line per request) costs a buffer copy, not a write system call.
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

// infoLines writes lines known to be of level info (the access log) into a logWriter, without looking for
// an urgent level in each: they are flushed with the others.
type infoLines struct{ lw *logWriter }

func (w infoLines) Write(p []byte) (int, error) {
	w.lw.mu.Lock()
	defer w.lw.mu.Unlock()
	return w.lw.buf.Write(p)
}

// urgent reports whether a log line is a warning or an error (text or JSON handler form). The level comes
// after the time, within the first 96 bytes.
func urgent(p []byte) bool {
	p = p[:min(len(p), 96)]
	return bytes.Contains(p, []byte("level=WARN")) || bytes.Contains(p, []byte("level=ERROR")) ||
		bytes.Contains(p, []byte(`"level":"WARN"`)) || bytes.Contains(p, []byte(`"level":"ERROR"`))
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
