package openapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/gatewaytest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// account is the demo account with a view of every kind, so that every route of the table has something to
// answer with 200.
func account() string {
	b, err := os.ReadFile("../../core/accounts/demo.yaml") // the embedded demo account's source
	if err != nil {
		panic(err)
	}
	y := string(b)
	const anchor = "      - {id: 2, kind: risk,"
	i := strings.Index(y, anchor)
	if i < 0 {
		panic("demo.yaml has no view of kind risk to add views after")
	}
	extra := "      - {id: 3, kind: ft, name: Pending features, description: Features not yet triaged, created_by: demo, conditions: \"field_203=1\"}\n" +
		"      - {id: 4, kind: uc, name: Pending use cases, description: Use cases not yet triaged, created_by: bob, conditions: \"field_303=1\"}\n"
	return y[:i] + extra + y[i:]
}

// sample names, for each kind's path segment, what exists in account(): a record, a view, a picklist field
// (with history) and the field a write sets.
var sample = map[string]struct {
	segment            string
	id, view, field    int
	title, titleSearch string
}{
	"re":           {"re", 1, 1, 103, "field_101", "field_103=1"},
	"ft":           {"ft", 1, 3, 203, "field_201", "field_203=1"},
	"uc":           {"uc", 1, 4, 303, "field_301", "field_303=1"},
	"{api_prefix}": {"risk", 1, 2, 402, "field_401", "field_402=3"},
}

// start runs the real core with account() (and the demo history) and a real gateway in front of it, with the
// cache on and a rate policy that limits nobody in these tests but adds its headers, on loopback ports.
func start(tb testing.TB, limiter gateway.Limiter) string {
	tb.Helper()
	c := coretest.Start(tb, coretest.Options{AccountsYAML: account()})
	if err := accounts.SeedDemoHistory(context.Background(), c.Store); err != nil {
		tb.Fatalf("seed history: %v", err)
	}
	return serve(tb, gateway.Options{Upstreams: []string{c.URL}, Cache: gateway.CacheOptions{Enabled: true}, Limiter: limiter,
		MaxBodyBytes: 64 << 10, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// serve runs a gateway with opt (over the default configuration) on a free loopback port until the test ends
// and returns its URL.
func serve(tb testing.TB, opt gateway.Options) string {
	tb.Helper()
	_, url := gatewaytest.Serve(tb, gatewaytest.With(opt))
	return url
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// call is one request of a test: user "" sends no credentials; headers are "Key: value".
type call struct {
	method, path, user, pass, body string
	headers                        []string
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// newRequest builds c's request against base, its body (if any) as JSON unless its headers say otherwise.
func (c call) newRequest(tb testing.TB, base string) *http.Request {
	tb.Helper()
	req, err := testsupport.NewRequest(c.method, base+c.path, c.user, c.pass, c.body)
	if err != nil {
		tb.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	testsupport.SetHeaders(req.Header, c.headers...)
	return req
}

// send sends c to the gateway at base.
func send(tb testing.TB, base string, c call) reply {
	tb.Helper()
	r, err := testsupport.Read(httpClient, c.newRequest(tb, base))
	if err != nil {
		tb.Fatal(err)
	}
	return reply{r.Status, r.Header, []byte(r.Body)}
}

// validate checks c and its reply r against the document: the request (parameters, credentials, body) unless
// requestToo is false (a request the document does not allow, sent to see the error), and the response (status,
// headers, body).
func validate(tb testing.TB, v validator.Validator, base string, c call, r reply, requestToo bool) {
	tb.Helper()
	req := c.newRequest(tb, base)
	res := &http.Response{StatusCode: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body)),
		Request: req, ContentLength: int64(len(r.body))}
	var ok bool
	var errs []*verr
	if requestToo {
		ok, errs = v.ValidateHttpRequestResponse(req, res)
	} else {
		ok, errs = v.ValidateHttpResponse(req, res)
	}
	if ok {
		return
	}
	for _, e := range errs {
		tb.Errorf("%s %s -> %d: %s: %s", c.method, c.path, r.status, e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			tb.Errorf("    %s (at %s, schema %s)", se.Reason, se.FieldPath, se.KeywordLocation)
		}
	}
	tb.Errorf("    body: %.600s", r.body)
}

type verr = verrors.ValidationError
