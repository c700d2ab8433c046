package accounts

import (
	"fmt"
	"strconv"
)

// Error refuses an account file: which file, which line and why. Parse and LoadFiles return it unwrapped, so
// cmd/reqgate can print it as is and tests can match it with errors.As. Its text reads "file:line: reason".
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
