package translate

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// SyntaxError is malformed JSON given to JSONToXML. The gateway answers it with 400 and the position.
type SyntaxError struct {
	Offset int64 // byte offset of the offending input, 0-based
	Line   int   // 1-based
	Column int   // 1-based, in characters
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// StructureError is well-formed JSON that has no XML form under the mapping: an array or several keys at
// the root, a bad element or attribute name, an array inside an array, a character XML cannot carry. Path
// names the offending value as a JSON Pointer (RFC 6901). The gateway answers it with 400.
type StructureError struct {
	Path string
	Msg  string
}

func (e *StructureError) Error() string {
	if e.Path == "" {
		return "JSON cannot be written as XML: " + e.Msg
	}
	return fmt.Sprintf("JSON cannot be written as XML: %s: %s", e.Path, e.Msg)
}

// XMLError is XML that XMLToJSON cannot read: not well formed, a DOCTYPE, an encoding other than UTF-8,
// text mixed with child elements. Documents of the interface never cause it; the gateway treats it as a bad
// upstream response.
type XMLError struct {
	Offset int64
	Line   int
	Column int
	Msg    string
}

func (e *XMLError) Error() string {
	if e.Line == 0 {
		return "invalid XML: " + e.Msg
	}
	return fmt.Sprintf("invalid XML at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// position turns a byte offset into a 1-based line and column (columns count characters).
func position(in []byte, off int) (line, col int) {
	if off > len(in) {
		off = len(in)
	}
	line = 1 + bytes.Count(in[:off], []byte("\n"))
	start := bytes.LastIndexByte(in[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(in[start:off])
}

// runeName formats r for an error message.
func runeName(r rune) string { return fmt.Sprintf("U+%04X", r) }
