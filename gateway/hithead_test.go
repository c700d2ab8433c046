package gateway

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestHitHeadCopied: the repeated hits of one connection are answered with the head of its last hit copied
// whole, and every answer is the one a fresh connection gets (but for its request id, Age, Date and rate
// counts), whatever representation each asks for (content codings, a 304, JSON) and whatever of the gateway's
// own headers it gets (its request id, CORS for a page). A record written meanwhile is never answered with the
// head of its old entry.
func TestHitHeadCopied(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := defaultsOptions(t, c)
	opt.CORSOrigins = []string{"https://app.example"}
	gw := startGateway(t, opt)
	h := gw.Handler()
	server, _ := tcpPair(t)
	kept := &conn{Conn: server, stripe: 1}
	// serve runs one GET of benchPath with the extra header lines through the handler on connection cn.
	serve := func(cn *conn, extra string) (status int, head map[string]string, body string) {
		t.Helper()
		ctx := new(fasthttp.RequestCtx)
		ctx.Init2(cn, nil, false)
		raw := "GET " + benchPath + " HTTP/1.1\r\nHost: gw.test\r\nAuthorization: " + benchAuth + "\r\n" + extra + "\r\n"
		if err := ctx.Request.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatal(err)
		}
		h(ctx)
		head = map[string]string{}
		for k, v := range ctx.Response.Header.All() {
			switch string(k) {
			case "Age", "Date", "Ratelimit":
			default:
				head[string(k)] += string(v) + "\n"
			}
		}
		if !strings.HasPrefix(string(ctx.Response.Header.Peek("Ratelimit")), `"never";r=`) {
			t.Errorf("RateLimit %q", ctx.Response.Header.Peek("Ratelimit"))
		}
		head["Content-Type"] = string(ctx.Response.Header.ContentType())
		head["Content-Encoding"] = string(ctx.Response.Header.ContentEncoding())
		head["Connection-Close"] = map[bool]string{true: "yes"}[ctx.Response.Header.ConnectionClose()]
		return ctx.Response.StatusCode(), head, string(ctx.Response.Body())
	}
	get(t, gw.URL+benchPath) // fills the cache
	_, first, _ := serve(kept, "")
	etag := strings.TrimSpace(first["Etag"])
	if etag == "" {
		t.Fatalf("no ETag on a hit: %v", first)
	}
	steps := []struct {
		name, extra string
		status      int
		kept        bool // the connection keeps this answer's head for the next (the one before was alike)
	}{
		{"plain again", "", 200, true},
		{"plain, copied", "", 200, true},
		{"gzip", "Accept-Encoding: gzip\r\n", 200, false},
		{"gzip again", "Accept-Encoding: gzip\r\n", 200, true},
		{"gzip, copied", "Accept-Encoding: gzip\r\n", 200, true},
		{"brotli", "Accept-Encoding: br\r\n", 200, false},
		{"brotli again", "Accept-Encoding: br\r\n", 200, true},
		{"brotli, copied", "Accept-Encoding: br\r\n", 200, true},
		{"not modified", "If-None-Match: " + etag + "\r\n", 304, false},
		{"not modified again", "If-None-Match: " + etag + "\r\n", 304, true},
		{"not modified, copied", "If-None-Match: " + etag + "\r\n", 304, true},
		{"plain after 304", "", 200, false},
		{"json", "Accept: application/json\r\n", 200, false},
		{"json again", "Accept: application/json\r\n", 200, true},
		{"json, copied", "Accept: application/json\r\n", 200, true},
		{"plain after json", "", 200, false},
		{"a page's (the same answer: kept anew)", "Origin: https://app.example\r\n", 200, true},
		{"a page's again", "Origin: https://app.example\r\n", 200, true},
		{"a page's, copied", "Origin: https://app.example\r\n", 200, true},
		{"another page's (not allowed: other headers)", "Origin: https://other.example\r\n", 200, true},
		{"plain after pages (kept anew)", "", 200, true},
		{"plain again after pages", "", 200, true},
	}
	for i, st := range steps {
		id := "X-Request-Id: step-" + strconv.Itoa(i) + "\r\n" // each answer must carry its own
		status, got, body := serve(kept, st.extra+id)
		wantStatus, want, wantBody := serve(&conn{Conn: server, stripe: 2}, st.extra+id) // a fresh connection
		if status != st.status || status != wantStatus || body != wantBody {
			t.Errorf("%s: status %d, body of %d bytes; a fresh connection gets %d, %d bytes; want %d",
				st.name, status, len(body), wantStatus, len(wantBody), st.status)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s %q, a fresh connection gets %q", st.name, k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: headers %v, a fresh connection gets %v", st.name, got, want)
		}
		if kept.hit.ready != st.kept {
			t.Errorf("%s: head kept = %v, want %v", st.name, kept.hit.ready, st.kept)
		}
	}
	// The record changes: its next hits are of a new entry, with a new tag, never the old head.
	if r := do(t, http.MethodPut, gw.URL+benchPath, "demo", "demo", lateBody); r.Status != http.StatusOK {
		t.Fatalf("PUT: %d", r.Status)
	}
	get(t, gw.URL+benchPath)
	for i := range 3 {
		_, got, body := serve(kept, "")
		if tag := strings.TrimSpace(got["Etag"]); tag == etag || !strings.Contains(body, lateTitle) {
			t.Errorf("hit %d after the write: ETag %s (before %s), body %q", i+1, tag, etag, body)
		}
	}
}
