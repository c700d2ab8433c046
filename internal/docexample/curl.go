package docexample

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// DocAddress is the address the examples are written for; Run sends them to the server's address instead.
const DocAddress = "127.0.0.1:8080"

// Result is what a server answered to a command.
type Result struct {
	Status int
	Header http.Header
	Body   []byte
}

// request is a command's HTTP request as curl would send it.
type request struct {
	method string
	url    string
	header http.Header
	body   []byte
	output string // -o FILE or > FILE; "/dev/null" discards
}

// parseCurl turns the arguments of a curl command into the request curl would send, for the options the
// examples use: -X, -H (`Name:` removes a header curl adds), -u, -d/--data/--data-binary/--data-raw (with @FILE
// read from dir), -I, -i, -s, -o and -D. Any other option is an error, so that an example cannot rely on one
// the test would ignore.
func parseCurl(args []string, dir string) (*request, error) {
	r := &request{header: http.Header{}}
	var (
		method   string
		head     bool
		hasData  bool
		data     [][]byte
		removed  = map[string]bool{}
		explicit = map[string]bool{}
	)
	next := func(i *int, opt string) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("%s needs a value", opt)
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-X", "--request":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			method = v
		case "-H", "--header":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			name, value, ok := strings.Cut(v, ":")
			if !ok {
				return nil, fmt.Errorf("header %q has no colon", v)
			}
			name = http.CanonicalHeaderKey(strings.TrimSpace(name))
			value = strings.TrimSpace(value)
			if value == "" {
				removed[name] = true
				r.header.Del(name)
				continue
			}
			explicit[name] = true
			r.header.Add(name, value)
		case "-u", "--user":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			r.header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(v)))
			explicit["Authorization"] = true
		case "-d", "--data", "--data-ascii", "--data-binary", "--data-raw":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			b := []byte(v)
			if name, ok := strings.CutPrefix(v, "@"); ok && a != "--data-raw" {
				if b, err = os.ReadFile(filepath.Join(dir, name)); err != nil {
					return nil, fmt.Errorf("%s @%s: %w", a, name, err)
				}
				if a != "--data-binary" {
					// curl -d strips the line breaks of a file.
					b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r"), nil), []byte("\n"), nil)
				}
			}
			hasData = true
			data = append(data, b)
		case "-o", "--output":
			v, err := next(&i, a)
			if err != nil {
				return nil, err
			}
			r.output = v
		case "-D", "--dump-header":
			if _, err := next(&i, a); err != nil {
				return nil, err
			}
		case "-I", "--head":
			head = true
		case "-i", "--include", "-s", "--silent", "-S", "--show-error", "-si", "-is", "-sI", "-Is":
			if strings.Contains(a, "I") {
				head = true
			}
		default:
			if strings.HasPrefix(a, "-") {
				return nil, fmt.Errorf("the curl option %s is not supported by the example runner", a)
			}
			if r.url != "" {
				return nil, fmt.Errorf("two URLs: %s and %s", r.url, a)
			}
			r.url = a
		}
	}
	if r.url == "" {
		return nil, fmt.Errorf("no URL")
	}
	if !strings.Contains(r.url, "://") {
		r.url = "http://" + r.url
	}
	switch {
	case method != "":
		r.method = method
	case head:
		r.method = http.MethodHead
	case hasData:
		r.method = http.MethodPost
	default:
		r.method = http.MethodGet
	}
	if hasData {
		r.body = bytes.Join(data, []byte("&"))
		if !explicit["Content-Type"] && !removed["Content-Type"] {
			r.header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	for name, value := range map[string]string{"User-Agent": "curl/8.5.0", "Accept": "*/*"} {
		if !explicit[name] && !removed[name] {
			r.header.Set(name, value)
		}
	}
	return r, nil
}

// Session runs the commands of a page against one server, and carries what one answer tells the next
// command: the page shows an example's ETag and Location as they were when it was written, and a later
// command that sends them back (If-Match, the URL of a created record) is sent what the server really
// answered.
type Session struct {
	Client *http.Client // see NewClient
	Addr   string       // host:port of the server, for DocAddress
	Dir    string       // where the commands' files (-o, > FILE, @FILE) are
	learnt map[string]string
}

// Run sends a command as curl would send it, and returns the last answer (a command may repeat).
func (s *Session) Run(ctx context.Context, cmd Command) (*Result, error) {
	args := make([]string, len(cmd.Args))
	for i, a := range cmd.Args {
		args[i] = s.substitute(strings.ReplaceAll(a, DocAddress, s.Addr))
	}
	r, err := parseCurl(args, s.Dir)
	if err != nil {
		return nil, fmt.Errorf("line %d: %w", cmd.Line, err)
	}
	if cmd.Output != "" {
		r.output = cmd.Output
	}
	var res *Result
	for range cmd.Repeat {
		if res, err = send(ctx, s.Client, r); err != nil {
			return nil, fmt.Errorf("line %d: %w", cmd.Line, err)
		}
	}
	if r.output != "" && r.output != "/dev/null" {
		if err := os.WriteFile(filepath.Join(s.Dir, r.output), res.Body, 0o600); err != nil {
			return nil, fmt.Errorf("line %d: save the body: %w", cmd.Line, err)
		}
	}
	return res, nil
}

// Check is the package's Check for this session's server; it also learns the ETag and Location the answer
// really has for those the page shows.
func (s *Session) Check(exp *Response, got *Result) []string {
	diffs := Check(exp, got, s.Addr)
	for _, name := range []string{"Etag", "Location"} {
		doc, have := exp.Header.Get(name), got.Header.Get(name)
		if doc == "" || have == "" {
			continue
		}
		doc = strings.ReplaceAll(doc, DocAddress, s.Addr)
		if doc != have {
			if s.learnt == nil {
				s.learnt = map[string]string{}
			}
			s.learnt[doc] = have
		}
	}
	return diffs
}

// substitute replaces in a what the session learnt; a value counts only where a digit does not follow it, so
// that the record 1 learnt is not taken for the start of the record 14.
func (s *Session) substitute(a string) string {
	for doc, have := range s.learnt {
		var b strings.Builder
		for {
			i := strings.Index(a, doc)
			if i < 0 {
				b.WriteString(a)
				break
			}
			end := i + len(doc)
			b.WriteString(a[:i])
			if end < len(a) && a[end] >= '0' && a[end] <= '9' {
				b.WriteString(doc)
			} else {
				b.WriteString(have)
			}
			a = a[end:]
		}
		a = b.String()
	}
	return a
}

func send(ctx context.Context, client *http.Client, r *request) (*Result, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return nil, fmt.Errorf("build the request: %w", err)
	}
	req.Header = r.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the body: %w", r.method, r.url, err)
	}
	return &Result{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// NewClient is an HTTP client that behaves as curl does for the examples: no redirect followed, no
// Accept-Encoding added, and the body left as the server sent it.
func NewClient() *http.Client {
	return &http.Client{
		Transport:     &http.Transport{DisableCompression: true, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
