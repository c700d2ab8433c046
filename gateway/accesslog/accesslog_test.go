package accesslog

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// slogLine is what log/slog writes for the same entry: the reference the access log must match byte for byte.
func slogLine(t testing.TB, format string, at time.Time, e *Entry) string {
	t.Helper()
	var buf bytes.Buffer
	var h slog.Handler = slog.NewJSONHandler(&buf, nil)
	if format == "text" {
		h = slog.NewTextHandler(&buf, nil)
	}
	h = h.WithAttrs([]slog.Attr{slog.String("part", "gateway")})
	r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	r.AddAttrs(
		slog.String("request_id", e.RequestID),
		slog.String("method", e.Method),
		slog.String("path", e.Path),
		slog.String("route", e.Route),
		slog.String("account", e.Account),
		slog.String("user", e.User),
		slog.String("ip", e.IP),
		slog.Int("status", e.Status),
		slog.Int("bytes", e.Bytes),
		slog.String("cache", e.Cache),
		slog.String("upstream", e.Core),
		slog.Float64("upstream_ms", float64(e.Upstream.Microseconds())/1000),
		slog.Float64("duration_ms", float64(e.Duration.Microseconds())/1000),
		slog.String("user_agent", e.UserAgent),
	)
	if e.TraceID != "" {
		r.AddAttrs(slog.String("trace_id", e.TraceID))
	}
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// attrsLine is slog's line from Entry.Attrs, as the gateway writes it when it has no Logger.
func attrsLine(t testing.TB, format string, at time.Time, e *Entry) string {
	t.Helper()
	var buf bytes.Buffer
	var h slog.Handler = slog.NewJSONHandler(&buf, nil)
	if format == "text" {
		h = slog.NewTextHandler(&buf, nil)
	}
	r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	r.AddAttrs(e.Attrs()...)
	if err := h.WithAttrs([]slog.Attr{slog.String("part", "gateway")}).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func line(format string, at time.Time, e *Entry) string {
	var buf bytes.Buffer
	if err := New(&buf, format, "part", "gateway").Log(at, e); err != nil {
		panic(err)
	}
	return buf.String()
}

func TestMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 17, 5, 123456789, time.UTC)
	plain := Entry{RequestID: "fb21665ab104-4", Method: "GET", Path: "/api2/demo/re/1", Route: "record",
		Account: "demo", User: "demo", IP: "127.0.0.1", Status: 200, Bytes: 1234, Cache: "HIT",
		Duration: 37 * time.Microsecond, UserAgent: "curl/8.5.0"}
	odd := plain
	odd.UserAgent = "Mozilla/5.0 (X11; Linux x86_64) \"quoted\" =\\ \xff\x00"
	odd.Core = "core-1.internal:8081"
	odd.Bytes = 0
	odd.User = "a \"quoted\"\n=user\\ with\ttabs, <html> & \u2028 \xff\x00 é"
	odd.Path = "/api2/k%20y/re/1?x=1&y=é"
	odd.Cache = ""
	odd.Upstream = 1234567 * time.Microsecond
	odd.Duration = 3 * time.Hour
	odd.Status = 502
	traced := plain
	traced.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name string
		at   time.Time
		e    Entry
	}{
		{"plain", at, plain},
		{"characters to escape and quote", at, odd},
		{"whole second, another zone", time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+1800)), plain},
		{"empty entry", at, Entry{}},
		{"traced", at, traced},
	}
	for _, tt := range tests {
		for _, format := range []string{"json", "text"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				got, want := line(format, tt.at, &tt.e), slogLine(t, format, tt.at, &tt.e)
				if got != want {
					t.Errorf("access log line differs from slog's\n got: %q\nwant: %q", got, want)
				}
				if viaAttrs := attrsLine(t, format, tt.at, &tt.e); viaAttrs != want {
					t.Errorf("slog with Entry.Attrs differs\n got: %q\nwant: %q", viaAttrs, want)
				}
			})
		}
	}
	// trace_id is written only for a traced request.
	if l := line("json", at, &plain); strings.Contains(l, "trace_id") {
		t.Errorf("untraced line has a trace_id: %s", l)
	}
	if l := line("text", at, &traced); !strings.HasSuffix(l, " trace_id=4bf92f3577b34da6a3ce929d0e0e4736\n") {
		t.Errorf("traced line does not end with its trace_id: %s", l)
	}
	// And the JSON form is JSON, with the fields under their names.
	var rec map[string]any
	if err := json.Unmarshal([]byte(line("json", at, &odd)), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["msg"] != "request" || rec["status"] != 502.0 || rec["upstream_ms"] != 1234.567 || rec["part"] != "gateway" ||
		rec["upstream"] != "core-1.internal:8081" || rec["bytes"] != 0.0 || !strings.HasPrefix(rec["user_agent"].(string), "Mozilla/5.0") {
		t.Errorf("decoded line: %v", rec)
	}
}

// FuzzMatchesSlog checks that any strings and durations give slog's exact line in both forms.
func FuzzMatchesSlog(f *testing.F) {
	f.Add("demo", "/api2/demo/re/1", "127.0.0.1", int64(37000), int64(0), 200)
	f.Add("\xff\x00\"=\\ \u2028é", "", "::1", int64(-5), int64(1)<<62, 0)
	f.Fuzz(func(t *testing.T, user, path, ip string, dur, up int64, status int) {
		e := Entry{RequestID: "r", Method: "GET", Path: path, Route: "record", Account: user, User: user, IP: ip,
			Status: status, Bytes: status * 7, Cache: "MISS", Core: ip, Upstream: time.Duration(up),
			Duration: time.Duration(dur), UserAgent: path + user}
		at := time.Unix(1_790_000_000, dur&(1<<30-1)).UTC()
		for _, format := range []string{"json", "text"} {
			if got, want := line(format, at, &e), slogLine(t, format, at, &e); got != want {
				t.Fatalf("%s: got %q, want %q", format, got, want)
			}
		}
	})
}

func TestLogIsOneWrite(t *testing.T) {
	var w countingWriter
	l := New(&w, "json")
	for range 3 {
		if err := l.Log(time.Now(), &Entry{User: strings.Repeat("u", 5000)}); err != nil {
			t.Fatal(err)
		}
	}
	if w.writes != 3 || w.lines != 3 {
		t.Errorf("3 entries gave %d writes and %d lines, want 3 and 3", w.writes, w.lines)
	}
}

type countingWriter struct{ writes, lines int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// BenchmarkAccessLog compares a line of this package with slog's JSON handler writing the same record.
func BenchmarkAccessLog(b *testing.B) {
	e := Entry{RequestID: "fb21665ab104-4", Method: "GET", Path: "/api2/demo/re/1", Route: "record",
		Account: "demo", User: "demo", IP: "127.0.0.1", Status: 200, Cache: "HIT", Duration: 37 * time.Microsecond}
	b.Run("accesslog", func(b *testing.B) {
		l := New(io.Discard, "json", "part", "gateway")
		b.ReportAllocs()
		for range b.N {
			_ = l.Log(time.Now(), &e)
		}
	})
	b.Run("slog", func(b *testing.B) {
		l := slog.New(slog.NewJSONHandler(io.Discard, nil)).With("part", "gateway")
		b.ReportAllocs()
		for range b.N {
			l.LogAttrs(context.Background(), slog.LevelInfo, "request",
				slog.String("request_id", e.RequestID), slog.String("method", e.Method),
				slog.String("path", e.Path), slog.String("route", e.Route), slog.String("account", e.Account),
				slog.String("user", e.User), slog.String("ip", e.IP), slog.Int("status", e.Status),
				slog.Int("bytes", e.Bytes), slog.String("cache", e.Cache), slog.String("upstream", e.Core),
				slog.Float64("upstream_ms", float64(e.Upstream.Microseconds())/1000),
				slog.Float64("duration_ms", float64(e.Duration.Microseconds())/1000), slog.String("user_agent", e.UserAgent))
		}
	})
}

// TestTimeAcrossLines writes a sequence of times through one Logger (which reuses the text of a second for
// the lines within it) and checks every line against slog's: fractions with and without trailing zeros, the
// next second, the same instant in other zones, and back.
func TestTimeAcrossLines(t *testing.T) {
	base := time.Date(2026, 11, 24, 6, 36, 32, 0, time.UTC)
	east := time.FixedZone("east", 5*3600+1800)
	times := []time.Time{
		base, base.Add(120 * time.Millisecond), base.Add(123456789), base.Add(999999999), base.Add(1),
		base.Add(time.Second), base.Add(time.Second + 5000), base.In(east), base.Add(7).In(east),
		base.Add(7).In(time.Local), base.Add(8), base.Add(-time.Hour), base.Add(-time.Hour + 500*time.Microsecond),
	}
	e := Entry{RequestID: "r", Method: "GET", Path: "/p", Status: 200}
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		l := New(&buf, format, "part", "gateway")
		for _, at := range times {
			buf.Reset()
			if err := l.Log(at, &e); err != nil {
				t.Fatal(err)
			}
			if want := slogLine(t, format, at, &e); buf.String() != want {
				t.Errorf("%s at %v: got %q, want %q", format, at, buf.String(), want)
			}
		}
	}
}

// Durations are written as slog writes float64(d.Microseconds())/1000, on both sides of every boundary of the
// integer formatting (each number of fraction digits, the exponent of the text form at 10^6 ms, negative ones).
func TestMillisMatchSlog(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 17, 5, 0, time.UTC)
	var us []int64
	for n := int64(0); n <= 2100; n++ {
		us = append(us, n)
	}
	for p := int64(10); p <= 1e15; p *= 10 {
		us = append(us, p-1, p, p+1, p+10, p+100, p*7+3, -p)
	}
	for _, n := range us {
		e := Entry{Upstream: time.Duration(n) * time.Microsecond, Duration: time.Duration(n)*time.Microsecond + 999}
		for _, format := range []string{"json", "text"} {
			if got, want := line(format, at, &e), slogLine(t, format, at, &e); got != want {
				t.Fatalf("%d us, %s: got %q, want %q", n, format, got, want)
			}
		}
	}
}
