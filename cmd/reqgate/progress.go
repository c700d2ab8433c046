package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressEvery is how often a progress line is logged when the output is not a terminal. Tests lower it.
var progressEvery = 5 * time.Second

// progress shows how far a long piece of work (store copy, applying account files) has come, in records: a bar
// on a terminal, otherwise a log line at most every interval with the records done, the total and the rate.
// It is used from the one goroutine doing the work.
type progress struct {
	what  string // "copy", "apply"
	total int64
	done  int64
	start time.Time

	bar   *progressbar.ProgressBar // on a terminal; nil otherwise
	out   io.Writer                // the bar's terminal
	log   *slog.Logger
	every time.Duration
	last  time.Time // of the last log line
}

// newProgress reports to stderr: a bar when it is a terminal, otherwise lines logged to log at most every
// progressEvery. total is the number of records expected so far (grow adds to it).
func newProgress(what string, total int64, stderr io.Writer, log *slog.Logger) *progress {
	if isTerminal(stderr) {
		return newProgressBar(what, total, stderr)
	}
	return newProgressLog(what, total, log, progressEvery)
}

// newProgressBar draws a bar on w.
func newProgressBar(what string, total int64, w io.Writer) *progress {
	p := newProgressLog(what, total, nil, 0)
	p.out = w
	p.bar = progressbar.NewOptions64(max(total, 1),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetItsString("records"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
	)
	return p
}

// newProgressLog logs a line to log at most every interval (every call when 0).
func newProgressLog(what string, total int64, log *slog.Logger, every time.Duration) *progress {
	now := time.Now()
	return &progress{what: what, total: total, start: now, log: log, every: every, last: now}
}

// isTerminal reports whether w is a terminal, where a bar redrawn in place can be read.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// grow adds n records to the total expected.
func (p *progress) grow(n int) {
	p.total += int64(n)
	if p.bar != nil {
		p.bar.ChangeMax64(max(p.total, 1))
	}
}

// add counts n records done.
func (p *progress) add(n int) {
	p.done += int64(n)
	if p.bar != nil {
		_ = p.bar.Add(n)
		return
	}
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.log.Info(p.what+" progress", "records", p.done, "total", p.total, "records_per_s", p.rate(now))
	}
}

// rate is the records done per second since the start, rounded.
func (p *progress) rate(now time.Time) int64 {
	s := now.Sub(p.start).Seconds()
	if s <= 0 {
		return 0
	}
	return int64(float64(p.done)/s + 0.5)
}

// clear takes the bar off its line, so that a line printed next is not drawn over; the bar comes back with
// the next records.
func (p *progress) clear() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

// finish ends the bar and returns the time since the start.
func (p *progress) finish() time.Duration {
	if p.bar != nil {
		_ = p.bar.Finish()
		_, _ = fmt.Fprintln(p.out) // the bar stays on its line
	}
	return time.Since(p.start)
}
