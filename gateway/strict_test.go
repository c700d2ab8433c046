package gateway

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// rawAuth is the Authorization line of demo/demo.
const rawAuth = "Authorization: Basic ZGVtbzpkZW1v\r\n"

// rawCreate is a record the core accepts, with bare LFs, blank lines and a request line in its value: body
// bytes the gateway must not take for a request head.
const rawCreate = "<requirement>\n\n<fields><field><name>field_101</name><value>one\n\nGET /api2/demo/re/1 HTTP/1.1\n" +
	"Host: x\n\n</value></field></fields></requirement>\n"

// rawAnswer is one response read from a raw connection.
type rawAnswer struct {
	Status int
	Header http.Header
	Body   string
}

// sendRaw writes raw to a new connection to gw and reads n responses. It reports whether the gateway then
// closed the connection, and fails the test when an answer does not come before the deadline: the gateway
// under test has a longer read timeout, so a request it holds shows as that failure.
func sendRaw(t *testing.T, gw *testGateway, raw string, n int) (answers []rawAnswer, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(gw.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for i := range n {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("answer %d: none before the deadline: the gateway holds the request", i+1)
			}
			t.Fatalf("answer %d: %v (answers so far: %+v)", i+1, err, answers)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("answer %d: body: %v", i+1, err)
		}
		answers = append(answers, rawAnswer{Status: res.StatusCode, Header: res.Header, Body: string(b)})
	}
	// A closed connection reads EOF at once; an open one has nothing more to say until the deadline.
	if err := conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err = br.ReadByte()
	return answers, errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// chunked encodes body as one chunk and the last chunk.
func chunked(body string) string {
	return strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
}

// TestHTTP11Strictness sends requests that break the message syntax of RFC 9112, or the version and method
// rules of RFC 9110, as raw bytes to a real gateway in front of the real core. Each must be refused with
// its status before it reaches the cache or the core, and the connection closed (what follows such a
// request on the connection, a smuggled request say, is never read); none may be left waiting for the read
// timeout. Well-formed requests around them, bodies holding bare LFs included, are served.
func TestHTTP11Strictness(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.ReadTimeout = time.Minute
	gw := startGateway(t, opt)
	get(t, gw.URL+"/api2/demo/re/1")
	get(t, gw.URL+"/api2/demo/re/1")

	const (
		get1     = "GET /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth
		post     = "POST /api2/demo/re HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "Content-Type: application/xml\r\n"
		smuggled = "GET /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n\r\n"
		// A read a create of re changes, so that the core answers it after a create (re/1 stays cached).
		searchRe = "GET /api2/demo/re/search?created_time%3E1000000000 HTTP/1.1\r\nHost: gw\r\n" + rawAuth
	)
	tests := []struct {
		name     string
		raw      string
		want     []int // statuses of the answers in order
		closed   bool  // the connection is closed after the last answer
		upstream int   // requests the core sees
		message  string
	}{
		// Framing: both Content-Length and Transfer-Encoding (RFC 9112 §6.1).
		{"content-length then transfer-encoding", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
			[]int{400}, true, 0, "both Content-Length and Transfer-Encoding"},
		{"transfer-encoding then content-length", post + "Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n" + chunked(rawCreate) + smuggled,
			[]int{400}, true, 0, "both Content-Length and Transfer-Encoding"},
		{"content-length and transfer-encoding identity", post + "Content-Length: 5\r\nTransfer-Encoding: identity\r\n\r\nhello",
			[]int{400}, true, 0, "Transfer-Encoding"},
		{"transfer-encoding identity", get1 + "Transfer-Encoding: identity\r\n\r\n", []int{400}, true, 0, "not chunked"},

		// Field names are tokens; lines end in CRLF, and are not folded (RFC 9112 §2.2, §5.1, §5.2).
		{"space before the colon", get1 + "Content-Length : 5\r\n\r\nhello", []int{400}, true, 0, "malformed"},
		{"space inside a field name", get1 + "Foo Bar: x\r\n\r\n", []int{400}, true, 0, "contains a space"},
		{"obsolete line folding", get1 + "Foo: a\r\n b\r\n\r\n", []int{400}, true, 0, "folded"},
		{"bare LF inside a field value", get1 + "Foo: a\nBar: b\r\n\r\n", []int{400}, true, 0, "bare LF"},
		{"bare LF ending every line", "GET /api2/demo/re/1 HTTP/1.1\nHost: gw\nAuthorization: Basic ZGVtbzpkZW1v\n\n",
			[]int{400}, true, 0, "bare LF"},
		{"bare LF ending the request line", "GET /api2/demo/re/1 HTTP/1.1\nHost: gw\r\n" + rawAuth + "\r\n", []int{400}, true, 0, "bare LF"},
		{"bare LF ending the header block", get1 + "\n", []int{400}, true, 0, "bare LF"},
		{"bare CR inside a field value", get1 + "Foo: a\rb\r\n\r\n", []int{400}, true, 0, "CR"},
		{"bare LF after a kept-alive request", get1 + "\r\n" + "GET /api2/demo/re/1 HTTP/1.1\nHost: gw\n\n",
			[]int{200, 400}, true, 0, "bare LF"},

		// Versions other than HTTP/1.0 and HTTP/1.1 (RFC 9110 §2.5, §15.6.6).
		{"HTTP/2.0", "GET /api2/demo/re/1 HTTP/2.0\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{505}, true, 0, "HTTP/1.1"},
		{"HTTP/1.2", "GET /api2/demo/re/1 HTTP/1.2\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{505}, true, 0, "HTTP/1.1"},
		{"HTTP/0.9", "GET /api2/demo/re/1 HTTP/0.9\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{505}, true, 0, "HTTP/1.1"},
		{"HTTP/2, refused by the parser", "GET /api2/demo/re/1 HTTP/2\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{505}, true, 0, "HTTP/1.1"},

		// Methods are case-sensitive; those no path serves are not implemented (RFC 9110 §9.1, §15.6.2); PATCH
		// and TRACE are known methods a path refuses with 405 (methods_test.go).
		{"lowercase get", "get /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{501}, true, 0, "case-sensitive"},
		{"mixed-case Get", "Get /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{501}, true, 0, "case-sensitive"},
		{"unknown method", "FOO /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "Content-Length: 0\r\n\r\n", []int{501}, true, 0, "No path"},
		{"CONNECT", "CONNECT /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{501}, true, 0, "No path"},
		{"PATCH", "PATCH /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "Content-Length: 0\r\n\r\n", []int{405}, false, 1, "allows GET, PUT, DELETE"},

		// Host is host[:port] (RFC 9112 §3.2, RFC 3986 §3.2.2) by the rule the core reads X-Forwarded-Host by
		// (package wire): the caller's Host is forwarded as that header and comes back in a Location.
		{"Host naming a user", "GET /api2/demo/re/1 HTTP/1.1\r\nHost: demo@evil.test\r\n" + rawAuth + "\r\n", []int{400}, true, 0, "Host header"},
		{"Host with sub-delims", "GET /api2/demo/re/1 HTTP/1.1\r\nHost: gw;x=y\r\n" + rawAuth + "\r\n", []int{400}, true, 0, "Host header"},
		{"Host with an impossible port", "GET /api2/demo/re/1 HTTP/1.1\r\nHost: gw:99999\r\n" + rawAuth + "\r\n", []int{400}, true, 0, "Host header"},
		{"Host as an IPv6 literal", "GET /api2/demo/re/1 HTTP/1.1\r\nHost: [::1]:8080\r\n" + rawAuth + "\r\n", []int{200}, false, 0, ""},

		// A header block over the read buffer.
		{"header too large", get1 + "X-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n", []int{431}, true, 0, "too large"},

		// Well-formed requests are served, bodies holding bare LFs and request lines included.
		{"HTTP/1.1", get1 + "\r\n", []int{200}, false, 0, ""},
		{"HTTP/1.0", "GET /api2/demo/re/1 HTTP/1.0\r\nHost: gw\r\n" + rawAuth + "\r\n", []int{200}, true, 0, ""},
		{"empty line before the request line", "\r\n" + get1 + "\r\n", []int{200}, false, 0, ""},
		{"content-length body with bare LFs, then a read", post + "Content-Length: " + strconv.Itoa(len(rawCreate)) + "\r\n\r\n" + rawCreate + searchRe + "\r\n",
			[]int{201, 200}, false, 2, ""},
		{"chunked body with bare LFs, then a read", post + "Transfer-Encoding: chunked\r\n\r\n" + chunked(rawCreate) + searchRe + "\r\n",
			[]int{201, 200}, false, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := gw.Stats().UpstreamRequests
			answers, closed := sendRaw(t, gw, tt.raw, len(tt.want))
			for i, want := range tt.want {
				if got := answers[i].Status; got != want {
					t.Errorf("answer %d: status=%d, want %d; body %q", i+1, got, want, answers[i].Body)
				}
			}
			last := answers[len(answers)-1]
			if closed != tt.closed {
				t.Errorf("connection closed=%v, want %v", closed, tt.closed)
			}
			if last.Status >= 400 {
				if !strings.Contains(last.Body, "<message>") || !strings.Contains(last.Body, tt.message) {
					t.Errorf("body %q is not an XML error saying %q", last.Body, tt.message)
				}
				if last.Header.Get("X-Cache") != "" {
					t.Errorf("X-Cache=%q on a refused request", last.Header.Get("X-Cache"))
				}
			}
			if got := gw.Stats().UpstreamRequests - before; got != uint64(tt.upstream) {
				t.Errorf("the core saw %d requests, want %d", got, tt.upstream)
			}
		})
	}
}

// FuzzFramingHeaders parses requests with arbitrary extra header lines ('|' separates them) and
// Content-Length and Transfer-Encoding in any case and order, as the server does: whenever fasthttp
// accepts one, the raw header shows both framing headers exactly when both were sent, and such a request is
// refused.
func FuzzFramingHeaders(f *testing.F) {
	f.Add("X-A: b|Content-Type: text/xml", true, true, uint8(0))
	f.Add("", true, false, uint8(5))
	f.Add("Content-Lengthx: 1", false, true, uint8(2))
	f.Fuzz(func(t *testing.T, extra string, cl, te bool, variant uint8) {
		if low := strings.ToLower(extra); strings.Contains(low, "content-length") || strings.Contains(low, "transfer-encoding") ||
			strings.ContainsAny(extra, "\r\n") {
			return
		}
		cases := [](func(string) string){strings.ToLower, strings.ToUpper, func(s string) string { return s }}
		clName, teName := cases[variant%3]("Content-Length"), cases[variant/3%3]("Transfer-Encoding")
		var lines []string
		if cl {
			lines = append(lines, clName+": 0")
		}
		if te {
			lines = append(lines, teName+": chunked")
		}
		if variant&0x80 != 0 {
			slices.Reverse(lines)
		}
		if extra != "" {
			extras := strings.Split(extra, "|")
			if slices.Contains(extras, "") {
				return // an empty line would end the header block
			}
			lines = append(extras, lines...)
		}
		raw := "POST /a HTTP/1.1\r\nHost: h\r\n"
		for _, l := range lines {
			raw += l + "\r\n"
		}
		raw += "\r\n"
		var h fasthttp.RequestHeader
		if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			return
		}
		if got := hasBothFramings(h.RawHeaders()); got != (cl && te) {
			t.Fatalf("hasBothFramings=%v for %q (content-length %v, transfer-encoding %v)", got, raw, cl, te)
		}
		if status, _ := strictStatus(&h); cl && te && status == 0 {
			t.Fatalf("%q is not refused", raw)
		}
	})
}

// TestParseErrorLog sends requests fasthttp cannot parse, with credentials: the server's log line about each
// goes to the gateway's logger and quotes nothing of the request.
func TestParseErrorLog(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	var logs testsupport.LockedBuffer
	opt := cachedOptions(c)
	// At debug: past the first, such lines are written at debug (TestJunkConnectionsDoNotFloodTheLog).
	opt.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gw := startGateway(t, opt)
	for _, raw := range []string{
		"GET /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "Content-Length : 5\r\n\r\nhello",
		"GET /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\n" + rawAuth + "Foo: a\nb: c\n\n",
	} {
		if answers, _ := sendRaw(t, gw, raw, 1); answers[0].Status != http.StatusBadRequest {
			t.Fatalf("status=%d, want 400", answers[0].Status)
		}
	}
	if !testsupport.WaitUntil(5*time.Second, func() bool { return strings.Count(logs.String(), "error when serving connection") == 2 }) {
		t.Fatalf("no log line for each request; log:\n%s", logs.String())
	}
	if l := logs.String(); strings.Contains(l, "ZGVtbzpkZW1v") || strings.Contains(l, "api2") {
		t.Errorf("the log quotes the request:\n%s", l)
	}
}

// TestJunkConnectionsDoNotFloodTheLog: a connection that sends what the server cannot parse is the client's
// doing, and anyone can open many. At the default level (info) a burst of them gives one warning, with their
// number, not a line each (which would flood the log and bury the operator's own warnings); every one of them
// is counted in reqgate_gateway_connection_errors_total.
func TestJunkConnectionsDoNotFloodTheLog(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	var logs testsupport.LockedBuffer
	opt := cachedOptions(c)
	opt.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	gw := startGateway(t, opt)
	addr := strings.TrimPrefix(gw.URL, "http://")
	before := connectionErrors.Get()
	const junk = 50
	for range junk {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Write([]byte("\x16\x03\x01 junk\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, nc) // the 400, then the server closes
		_ = nc.Close()
	}
	// Other tests' junk adds to the process-wide counter, never takes from it.
	if !testsupport.WaitUntil(5*time.Second, func() bool { return connectionErrors.Get()-before >= junk }) {
		t.Fatalf("reqgate_gateway_connection_errors_total rose by %d, want at least %d", connectionErrors.Get()-before, junk)
	}
	l := logs.String()
	if n := strings.Count(l, "error when serving connection"); n != 1 {
		t.Fatalf("%d log lines about %d junk connections, want 1; log:\n%s", n, junk, l)
	}
	if !strings.Contains(l, "level=WARN") || !strings.Contains(l, "connection_errors=1") {
		t.Errorf("the first junk connection is not warned about with its count; log:\n%s", l)
	}
}

// The server's other lines (it is at its connection limit, say) are the operator's to see: always at warn.
func TestServerLogOtherLinesWarn(t *testing.T) {
	var logs testsupport.LockedBuffer
	l := &serverLog{log: slog.New(slog.NewTextHandler(&logs, nil)), every: time.Hour}
	for range 3 {
		l.Printf("The incoming connection cannot be served, because %d concurrent connections are served.", 10)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 3 {
		t.Errorf("%d warnings for 3 lines, want 3; log:\n%s", n, logs.String())
	}
}
