package accesslog

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMemoLines: the lines of a connection's requests, written with its Memo, are byte for byte the lines
// written without one, in both forms, whichever field changes from one request to the next (and back), and
// when the same Memo meets a Logger of the other form.
func TestMemoLines(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 17, 5, 123456789, time.UTC)
	base := Entry{RequestID: "fb21665ab104-4", Method: "GET", Path: "/api2/demo/re/1", Route: "record",
		Account: "demo", User: "demo", IP: "127.0.0.1", Status: 200, Bytes: 1234, Cache: "HIT",
		Duration: 37 * time.Microsecond, UserAgent: "curl/8.5.0"}
	with := func(f func(e *Entry)) Entry { e := base; f(&e); return e }
	type step struct {
		name string
		e    Entry
	}
	seq := []step{
		{"first", base},
		{"repeated", with(func(e *Entry) { e.RequestID, e.Duration = "fb21665ab104-5", 41*time.Microsecond })},
		{"method", with(func(e *Entry) { e.Method = "HEAD" })},
		{"path", with(func(e *Entry) { e.Path = "/api2/demo/re/2" })},
		{"path of the same length", with(func(e *Entry) { e.Path = "/api2/demo/re/3" })},
		{"route", with(func(e *Entry) { e.Route = "records" })},
		{"account", with(func(e *Entry) { e.Account = "acme" })},
		{"user", with(func(e *Entry) { e.User = "a \"quoted\"\n=user" })},
		{"value moved between fields", with(func(e *Entry) { e.Account, e.User = "demod", "emo" })},
		{"ip", with(func(e *Entry) { e.IP = "::1" })},
		{"status", with(func(e *Entry) { e.Status = 304 })},
		{"bytes", with(func(e *Entry) { e.Bytes = 0 })},
		{"cache", with(func(e *Entry) { e.Cache = "MISS" })},
		{"upstream", with(func(e *Entry) { e.Core, e.Upstream = "core-1:8081", time.Millisecond })},
		{"user agent", with(func(e *Entry) { e.UserAgent = "other" })},
		{"traced", with(func(e *Entry) { e.TraceID = "4bf92f3577b34da6a3ce929d0e0e4736" })},
		{"outsize path", with(func(e *Entry) { e.Path = "/" + strings.Repeat("p", 2*maxMemo) })},
		{"back to the first", base},
		{"empty", Entry{}},
		{"first again", base},
	}
	var m Memo
	loggers := map[string]*Logger{}
	for _, format := range []string{"json", "text", "json"} {
		// Each step after the first entry, so that it differs from the memo's line in its own field only.
		for _, step := range slices.Concat(seq[:1], interleave(seq[1:], seq[0])) {
			var buf bytes.Buffer
			l := loggers[format]
			if l == nil {
				l = New(&buf, format, "part", "gateway")
				loggers[format] = l
			}
			l.w = &buf
			if err := l.LogWith(at, &step.e, &m); err != nil {
				t.Fatal(err)
			}
			if got, want := buf.String(), line(format, at, &step.e); got != want {
				t.Errorf("%s/%s: line with the memo differs\n got: %q\nwant: %q", format, step.name, got, want)
			}
		}
	}
}

// interleave is s with sep before each element.
func interleave[T any](s []T, sep T) []T {
	var out []T
	for _, v := range s {
		out = append(out, sep, v)
	}
	return out
}

// BenchmarkAccessLogMemo is BenchmarkAccessLog's line written with a connection's Memo, as every request of a
// keep-alive connection reading the same resource is.
func BenchmarkAccessLogMemo(b *testing.B) {
	e := Entry{RequestID: "fb21665ab104-4", Method: "GET", Path: "/api2/demo/re/1", Route: "record",
		Account: "demo", User: "demo", IP: "127.0.0.1", Status: 200, Cache: "HIT", Duration: 37 * time.Microsecond}
	for _, memo := range []bool{false, true} {
		name := "plain"
		if memo {
			name = "memo"
		}
		b.Run(name, func(b *testing.B) {
			l := New(io.Discard, "json", "part", "gateway")
			var m *Memo
			if memo {
				m = new(Memo)
			}
			b.ReportAllocs()
			for range b.N {
				_ = l.LogWith(time.Now(), &e, m)
			}
		})
	}
}
