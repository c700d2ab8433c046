// Package docexample reads the runnable examples of a Markdown reference page (docs/api.md) and checks a
// server's answers against them, so that every example a client developer copies is known to work.
//
// The convention, which the page states at its top:
//
//   - A fenced block ```sh holds curl commands, run in order against the server. A command may continue over
//     lines ending in `\`. A trailing comment that starts with a status (`# 409`) is the status that command
//     must get. `for i in $(seq N); do curl ...; done` runs a command N times. `> FILE` and `-o FILE` save a
//     body that a later `--data-binary @FILE` sends. Any other line is an error, so the page cannot hold an
//     example the test skips.
//   - A fenced block ```http right after it (only blank lines between) is the answer to the block's last
//     command: the status line, the headers that matter, a blank line and the body, if any. The status, each
//     header shown and the shape of the body are checked (see Check); a block without a body checks no body.
//   - `<!-- example server: NAME -->` before a ```sh block runs it against the server NAME instead of the
//     default one (the test defines the servers: one with a rate policy, say).
package docexample

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Example is one ```sh block with its expected answer.
type Example struct {
	Line     int       // of the ```sh fence, 1-based
	Server   string    // "" for the default server
	Commands []Command // in order
	Expect   *Response // the answer to the last command, or nil
}

// Command is one curl command line of an example.
type Command struct {
	Line   int      // where it starts, 1-based
	Text   string   // the command as written, continuations joined
	Args   []string // the words after "curl", quotes removed
	Repeat int      // how many times it runs (1 unless in a for loop)
	Status int      // the status of a trailing "# NNN" comment, or 0
	Output string   // the file of a "> FILE" redirection, or ""
}

// Response is an answer as the page shows it.
type Response struct {
	Line   int // of the ```http fence
	Status int
	Reason string
	Header http.Header
	Order  []string // the header names in the order shown, canonical
	Body   string   // "" when none is shown
}

var (
	serverComment = regexp.MustCompile(`^<!--\s*example server:\s*([A-Za-z0-9_-]+)\s*-->\s*$`)
	forLoop       = regexp.MustCompile(`^for [a-z]+ in \$\(seq ([0-9]+)\); do (curl .*); done(\s+#.*)?$`)
	statusComment = regexp.MustCompile(`^#\s*([1-5][0-9][0-9])\b`)
)

// Parse returns the examples of a Markdown page, in the order they appear.
func Parse(md []byte) ([]Example, error) {
	var (
		out     []Example
		server  string
		lines   []string
		sc      = bufio.NewScanner(bytes.NewReader(md))
		lastSh  = -1 // index in out of the last ```sh block, while only blank lines followed it
		inBlock string
		start   int
		body    []string
	)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read page: %w", err)
	}
	for i, line := range lines {
		n := i + 1
		if inBlock != "" {
			if strings.TrimSpace(line) != "```" {
				body = append(body, line)
				continue
			}
			switch inBlock {
			case "sh":
				cmds, err := parseCommands(start+1, body)
				if err != nil {
					return nil, err
				}
				out = append(out, Example{Line: start, Server: server, Commands: cmds})
				server = ""
				lastSh = len(out) - 1
			case "other":
				if len(body) > 0 && strings.HasPrefix(body[0], "HTTP/") {
					return nil, fmt.Errorf("line %d: a response must be in a block tagged http", start)
				}
			case "http":
				if lastSh < 0 || out[lastSh].Expect != nil {
					return nil, fmt.Errorf("line %d: an http block must follow a sh block of curl commands, with only blank lines between", start)
				}
				r, err := parseResponse(start, body)
				if err != nil {
					return nil, err
				}
				out[lastSh].Expect = r
			}
			inBlock = ""
			continue
		}
		if m := serverComment.FindStringSubmatch(line); m != nil {
			server = m[1]
			continue
		}
		if lang, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			lang = strings.TrimSpace(lang)
			if lang != "sh" && lang != "http" {
				lang = "other"
			}
			if lang != "http" {
				if lastSh >= 0 && out[lastSh].Expect == nil {
					return nil, fmt.Errorf("line %d: the answer to the sh block above must be a block tagged http (status line, headers, body)", n)
				}
				lastSh = -1
			}
			inBlock, start, body = lang, n, nil
			continue
		}
		if strings.TrimSpace(line) != "" {
			lastSh = -1
		}
	}
	if inBlock != "" {
		return nil, fmt.Errorf("line %d: the block is not closed", start)
	}
	return out, nil
}

// parseCommands reads the lines of a ```sh block; first is the line number of its first line.
func parseCommands(first int, lines []string) ([]Command, error) {
	var cmds []Command
	for i := 0; i < len(lines); i++ {
		n := first + i
		text := strings.TrimSpace(lines[i])
		for strings.HasSuffix(text, `\`) && i+1 < len(lines) {
			i++
			text = strings.TrimSpace(strings.TrimSuffix(text, `\`)) + " " + strings.TrimSpace(lines[i])
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cmd := Command{Line: n, Text: text, Repeat: 1}
		line := text
		if m := forLoop.FindStringSubmatch(text); m != nil {
			cmd.Repeat, _ = strconv.Atoi(m[1])
			line = m[2] + m[3]
		}
		words, comment, err := split(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if m := statusComment.FindStringSubmatch(comment); m != nil {
			cmd.Status, _ = strconv.Atoi(m[1])
		}
		if len(words) == 0 || words[0] != "curl" {
			return nil, fmt.Errorf("line %d: not a curl command: %s", n, text)
		}
		words = words[1:]
		if k := len(words); k >= 2 && words[k-2] == ">" {
			cmd.Output, words = words[k-1], words[:k-2]
		}
		for _, w := range words {
			if w == "|" || w == ">" || w == "<" || w == ";" || w == "&&" {
				return nil, fmt.Errorf("line %d: shell syntax %q is not supported in an example", n, w)
			}
		}
		cmd.Args = words
		cmds = append(cmds, cmd)
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("line %d: a sh block without a curl command", first-1)
	}
	return cmds, nil
}

// split splits a command line into words as a POSIX shell would for the subset the examples use: single and
// double quotes, backslash escapes, and a trailing comment, which it returns apart. Variables and command
// substitution are refused (the for loop is matched before).
func split(s string) (words []string, comment string, err error) {
	var (
		cur    strings.Builder
		inWord bool
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			return words, s[i:], nil
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("unclosed single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			for i++; ; i++ {
				if i >= len(s) {
					return nil, "", fmt.Errorf("unclosed double quote")
				}
				if s[i] == '"' {
					break
				}
				if s[i] == '$' || s[i] == '`' {
					return nil, "", fmt.Errorf("shell expansion in %q is not supported in an example", s)
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '$' || c == '`':
			return nil, "", fmt.Errorf("shell expansion in %q is not supported in an example", s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, "", nil
}

// parseResponse reads the lines of a ```http block.
func parseResponse(line int, lines []string) (*Response, error) {
	if len(lines) == 0 {
		return nil, fmt.Errorf("line %d: an empty http block", line)
	}
	r := &Response{Line: line, Header: http.Header{}}
	proto, rest, _ := strings.Cut(lines[0], " ")
	code, reason, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/") || err != nil || status < 100 || status > 599 {
		return nil, fmt.Errorf("line %d: the http block must start with a status line (HTTP/1.1 200 OK), not %q", line+1, lines[0])
	}
	r.Status, r.Reason = status, reason
	i := 1
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		name, value, ok := strings.Cut(lines[i], ":")
		if !ok || strings.TrimSpace(name) != name || name == "" {
			return nil, fmt.Errorf("line %d: not a header line: %q", line+1+i, lines[i])
		}
		name = http.CanonicalHeaderKey(name)
		if _, seen := r.Header[name]; !seen {
			r.Order = append(r.Order, name)
		}
		r.Header.Add(name, strings.TrimSpace(value))
	}
	if i < len(lines) {
		r.Body = strings.TrimSpace(strings.Join(lines[i+1:], "\n"))
	}
	return r, nil
}
