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

// progress shows how far a long piece of work (store copy, applying account files) has come, in records: on a
// terminal a bar per stage (an account of store copy), otherwise a log line at most every interval with the
// records done, the total known so far and the rate. It is used from the one goroutine doing the work.
type progress struct {
	what  string // "copy", "apply": the log lines' message is what+" progress"
	total int64  // records of the stages started so far
	done  int64
	start time.Time

	out io.Writer                // the terminal the bars are drawn on; nil for log lines
	bar *progressbar.ProgressBar // of the current stage, on a terminal

	log   *slog.Logger
	every time.Duration
	last  time.Time // of the last log line
}

// newProgress reports to stderr with bars when it is a terminal, otherwise with lines logged to log at most
// every progressEvery.
func newProgress(what string, stderr io.Writer, log *slog.Logger) *progress {
	if isTerminal(stderr) {
		return newProgressBar(what, stderr)
	}
	return newProgressLog(what, log, progressEvery)
}

// newProgressBar draws bars on w.
func newProgressBar(what string, w io.Writer) *progress {
	p := newProgressLog(what, nil, 0)
	p.out = w
	return p
}

// newProgressLog logs a line to log at most every interval (at every call when 0).
func newProgressLog(what string, log *slog.Logger, every time.Duration) *progress {
	now := time.Now()
	return &progress{what: what, start: now, log: log, every: every, last: now}
}

// isTerminal reports whether w is a terminal, where a bar redrawn in place can be read.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stage starts a part of the work of n records, named name on its bar.
func (p *progress) stage(name string, n int) {
	p.endStage()
	p.total += int64(n)
	if p.out == nil {
		return
	}
	p.bar = progressbar.NewOptions64(max(int64(n), 1),
		progressbar.OptionSetWriter(p.out),
		progressbar.OptionSetDescription(name),
		progressbar.OptionSetItsString("records"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true), // starts the clock of the rate with the stage
	)
}

// add counts n records done.
func (p *progress) add(n int) {
	p.done += int64(n)
	if p.bar != nil {
		_ = p.bar.Add(n)
		return
	}
	if p.out != nil {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.log.Info(p.what+" progress", "records", p.done, "total", p.total, "records_per_s", p.rate(now))
	}
}

// endStage fills the current stage's bar and ends its line, so that what is printed next starts on a line of
// its own.
func (p *progress) endStage() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_, _ = fmt.Fprintln(p.out)
		p.bar = nil
	}
}

// abort ends the current stage's bar where it stands (the work failed).
func (p *progress) abort() {
	if p.bar != nil {
		_, _ = fmt.Fprintln(p.out)
		p.bar = nil
	}
}

// finish ends the last stage and returns the time since the start.
func (p *progress) finish() time.Duration {
	p.endStage()
	return time.Since(p.start)
}

// rate is the records done per second since the start, rounded.
func (p *progress) rate(now time.Time) int64 {
	s := now.Sub(p.start).Seconds()
	if s <= 0 {
		return 0
	}
	return int64(float64(p.done)/s + 0.5)
}
