package testsupport

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Reply is a response read whole.
type Reply struct {
	Status int
	Header http.Header
	Body   string
}

// NewRequest builds a request with Basic credentials user:pass (user "" sends none) and, when body is not
// empty, the body as application/xml. Each header is "Key: value": the first of a name replaces what the
// request would carry (Content-Type: application/json sends the body as JSON), a later one of the same name
// is added beside it (to send a header twice), and an empty value removes the header, as curl -H 'Name:' does.
func NewRequest(method, url, user, pass, body string, headers ...string) (*http.Request, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/xml")
	}
	SetHeaders(req.Header, headers...)
	return req, nil
}

// SetHeaders applies headers "Key: value" to h as NewRequest does: the first of a name replaces what h
// holds, a later one of the same name is added beside it, and an empty value removes the header.
func SetHeaders(h http.Header, headers ...string) {
	given := map[string]bool{}
	for _, kv := range headers {
		k, v, _ := strings.Cut(kv, ":")
		k, v = http.CanonicalHeaderKey(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch {
		case v == "":
			h.Del(k)
		case given[k]:
			h.Add(k, v)
		default:
			h.Set(k, v)
		}
		given[k] = true
	}
}

// Read sends req through c and reads the response whole.
func Read(c *http.Client, req *http.Request) (Reply, error) {
	res, err := c.Do(req)
	if err != nil {
		return Reply{}, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Reply{}, fmt.Errorf("%s %s: read body: %w", req.Method, req.URL, err)
	}
	return Reply{Status: res.StatusCode, Header: res.Header, Body: string(b)}, nil
}

// Send is one request of NewRequest through c, read whole. It returns a transport failure, so it is for any
// goroutine; Do is for the test's own.
func Send(c *http.Client, method, url, user, pass, body string, headers ...string) (Reply, error) {
	req, err := NewRequest(method, url, user, pass, body, headers...)
	if err != nil {
		return Reply{}, err
	}
	return Read(c, req)
}

// Do is Send ending the test on a transport failure, so it is for the test's own goroutine.
func Do(tb testing.TB, c *http.Client, method, url, user, pass, body string, headers ...string) Reply {
	tb.Helper()
	r, err := Send(c, method, url, user, pass, body, headers...)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
