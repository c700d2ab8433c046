package accounts

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Error refuses an account file: which file, which line and why. Parse and LoadFiles return one unwrapped, or
// several joined with errors.Join (one per line, at most MaxErrors), so cmd/reqgate can print them as they are
// and tests can match the first with errors.As. Its text reads "file:line: reason".
type Error struct {
	File   string
	Line   int // 1-based
	Reason string
}

func (e *Error) Error() string { return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Reason }

// pos is where something was written: the file and the 1-based line.
type pos struct {
	file string
	line int
}

func (p pos) String() string { return p.file + ":" + strconv.Itoa(p.line) }

// errorf builds the *Error for this position.
func (p pos) errorf(format string, args ...any) error {
	line := p.line
	if line < 1 {
		line = 1
	}
	return &Error{File: p.file, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// where remembers the position of an item of the file and of each of its keys' values, so a check made after
// decoding (uniqueness, references) still names the exact line.
type where struct {
	item pos
	keys map[string]pos
}

// of returns the position of key's value, or of the item when the key was left out.
func (w where) of(key string) pos {
	if p, ok := w.keys[key]; ok {
		return p
	}
	return w.item
}

// MaxErrors bounds the refusals one read reports, so that the wrong file (a file broken throughout) gives a
// screenful instead of thousands of lines.
const MaxErrors = 50

// errList collects the refusals of one read in file order. Items that do not depend on each other (the
// accounts of a file, the users, objects, fields, views, records and relationships of an account) are each
// checked even after another was refused, so an operator sees every refusal in one run.
type errList struct {
	errs      []error
	truncated bool // a refusal past MaxErrors was dropped; reading stops
	fatal     bool // reading cannot go on (the file's YAML node budget is spent)
}

func (l *errList) add(err error) {
	if len(l.errs) >= MaxErrors {
		l.truncated = true
		return
	}
	l.errs = append(l.errs, err)
}

// sort puts the refusals in file order: by the files' order in names, then by line. The rounds of check find
// an account's cross-item refusals after every file was decoded; an operator reads them where they are.
func (l *errList) sort(names []string) {
	rank := func(err error) (int, int) {
		var e *Error
		if !errors.As(err, &e) {
			return len(names), 0
		}
		if i := slices.Index(names, e.File); i >= 0 {
			return i, e.Line
		}
		return len(names), e.Line
	}
	slices.SortStableFunc(l.errs, func(a, b error) int {
		fa, la := rank(a)
		fb, lb := rank(b)
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(la, lb))
	})
}

// stop reports whether reading should end here.
func (l *errList) stop() bool { return l.truncated || l.fatal }

func (l *errList) len() int { return len(l.errs) }

// err returns nil, the one refusal as it is (an *Error), or every refusal joined with errors.Join, the first
// found first, so errors.As still finds the first.
func (l *errList) err() error {
	switch {
	case len(l.errs) == 0:
		return nil
	case len(l.errs) == 1 && !l.truncated:
		return l.errs[0]
	}
	errs := l.errs
	if l.truncated {
		errs = append(errs[:len(errs):len(errs)], fmt.Errorf("more refusals not shown: stopped after %d", MaxErrors))
	}
	return errors.Join(errs...)
}
