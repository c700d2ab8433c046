package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestIfMatchThroughGateways has two clients read one record through two gateways on one core and both write
// it back with the ETag they read, in every representation (XML or JSON, plain, gzip or brotli): the first
// write is applied, the second gets 412 in the caller's format and the record keeps the first. A gateway
// without a cache gives the same tags. Weak tags, "*" on a deleted record and an If-Unmodified-Since before the
// last update are refused, and a browser may send the conditional headers and read ETag.
func TestIfMatchThroughGateways(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"https://app.example"}
	a, b := startGateway(t, opt), startGateway(t, opt)
	plain := startGateway(t, withConfig(Options{Upstreams: []string{c.URL}}))

	create := func(t *testing.T, title string) string {
		t.Helper()
		r := do(t, http.MethodPost, a.URL+"/api2/demo/re", "demo", "demo", xmlTitle(title))
		u, err := url.Parse(r.Header.Get("Location"))
		if r.Status != http.StatusCreated || err != nil {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		return u.Path
	}
	// read returns the ETag of a read of path through gw with the given Accept and Accept-Encoding.
	read := func(t *testing.T, gw *testGateway, path, accept, coding string) string {
		t.Helper()
		res, body := rawGet(t, gw.URL+path, "demo", "demo", "Accept: "+accept, "Accept-Encoding: "+coding, "Cache-Control: no-cache")
		tag := res.Header.Get("ETag")
		if res.StatusCode != http.StatusOK || len(tag) < 3 || tag[0] != '"' || len(res.Header.Values("ETag")) != 1 {
			t.Fatalf("GET %s (%s, %s): %d, ETag %q, want one strong tag: %s", path, accept, coding, res.StatusCode, res.Header.Values("ETag"), body)
		}
		if got := res.Header.Get("Content-Encoding"); got != coding && coding != "identity" {
			t.Fatalf("GET %s (%s): Content-Encoding %q, want %q", path, accept, got, coding)
		}
		return tag
	}
	titleOf := func(t *testing.T, path string) string {
		t.Helper()
		body := get(t, b.URL+path, "Cache-Control: no-cache").Body
		i := strings.Index(body, "<name>field_101</name>")
		if i < 0 {
			t.Fatalf("GET %s: no title in %s", path, body)
		}
		return body[i : i+60]
	}

	for _, tc := range []struct{ name, accept, coding string }{
		{"xml", "application/xml", "identity"},
		{"xml gzip", "application/xml", "gzip"},
		{"xml br", "application/xml", "br"},
		{"json", "application/json", "identity"},
		{"json gzip", "application/json", "gzip"},
		{"json br", "application/json", "br"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A body large enough to be compressed.
			path := create(t, "Lost update "+tc.name+strings.Repeat(" padding", 25))
			first, second := read(t, a, path, tc.accept, tc.coding), read(t, b, path, tc.accept, tc.coding)
			if first != second {
				t.Fatalf("one representation has two tags on two gateways: %s and %s", first, second)
			}
			body, ctype := xmlTitle("First"), "application/xml"
			other := xmlTitle("Second")
			if tc.accept == "application/json" {
				body, ctype = `{"requirement":{"fields":{"field":[{"name":"field_101","value":"First"}]}}}`, "application/json"
				other = strings.Replace(body, "First", "Second", 1)
			}
			hdr := func(tag string) []string {
				return []string{"Content-Type: " + ctype, "Accept: " + tc.accept, "If-Match: " + tag}
			}
			if r := do(t, http.MethodPut, a.URL+path, "demo", "demo", body, hdr(first)...); r.Status != http.StatusOK {
				t.Fatalf("first conditional PUT through gateway A: %d %s", r.Status, r.Body)
			}
			r := do(t, http.MethodPut, b.URL+path, "demo", "demo", other, hdr(second)...)
			if r.Status != http.StatusPreconditionFailed || !strings.HasPrefix(r.Header.Get("Content-Type"), tc.accept) ||
				!strings.Contains(r.Body, "Precondition failed") {
				t.Errorf("second PUT with the same ETag through gateway B: %d %s %s, want 412 in %s",
					r.Status, r.Header.Get("Content-Type"), r.Body, tc.accept)
			}
			if got := titleOf(t, path); !strings.Contains(got, "First") {
				t.Errorf("the refused PUT was written: %s", got)
			}
			// The tag read now, through either gateway, lets the second client write.
			if r := do(t, http.MethodPut, b.URL+path, "demo", "demo", other, hdr(read(t, a, path, tc.accept, tc.coding))...); r.Status != http.StatusOK {
				t.Errorf("PUT with the tag read after the first write: %d %s", r.Status, r.Body)
			}
		})
	}

	t.Run("tags", func(t *testing.T) {
		path := create(t, "Tags"+strings.Repeat(" padding", 25))
		tags := map[string]string{}
		for _, accept := range []string{"application/xml", "application/json"} {
			for _, coding := range []string{"identity", "gzip", "br"} {
				tag := read(t, a, path, accept, coding)
				if prev, ok := tags[tag]; ok {
					t.Errorf("%s %s and %s share the tag %s", accept, coding, prev, tag)
				}
				tags[tag] = accept + " " + coding
			}
			if got, want := read(t, plain, path, accept, "identity"), read(t, a, path, accept, "identity"); got != want {
				t.Errorf("%s: a gateway without a cache tags the record %s, one with a cache %s", accept, got, want)
			}
		}
	})
	t.Run("delete", func(t *testing.T) {
		path := create(t, "Delete")
		stale := read(t, a, path, "application/json", "identity")
		do(t, http.MethodPut, a.URL+path, "demo", "demo", xmlTitle("Changed"))
		if r := do(t, http.MethodDelete, b.URL+path, "demo", "demo", "", "If-Match: "+stale, "Accept: application/json"); r.Status != http.StatusPreconditionFailed || !strings.HasPrefix(r.Body, "{") {
			t.Errorf("DELETE with a stale ETag: %d %s, want 412 in JSON", r.Status, r.Body)
		}
		if r := do(t, http.MethodDelete, b.URL+path, "demo", "demo", "", "If-Match: "+read(t, a, path, "application/json", "gzip")); r.Status != http.StatusOK {
			t.Errorf("DELETE with the current ETag: %d %s", r.Status, r.Body)
		}
		if r := do(t, http.MethodDelete, a.URL+path, "demo", "demo", "", "If-Match: *"); r.Status != http.StatusPreconditionFailed {
			t.Errorf("DELETE with If-Match: * of a deleted record: %d %s, want 412", r.Status, r.Body)
		}
	})
	t.Run("weak and If-Unmodified-Since", func(t *testing.T) {
		path := create(t, "Weak")
		tag := read(t, a, path, "application/xml", "identity")
		if r := do(t, http.MethodPut, b.URL+path, "demo", "demo", xmlTitle("x"), "If-Match: W/"+tag); r.Status != http.StatusPreconditionFailed {
			t.Errorf("PUT with a weak tag: %d %s, want 412", r.Status, r.Body)
		}
		past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
		if r := do(t, http.MethodPut, b.URL+path, "demo", "demo", xmlTitle("x"), "If-Unmodified-Since: "+past); r.Status != http.StatusPreconditionFailed {
			t.Errorf("PUT unmodified since before the last update: %d %s, want 412", r.Status, r.Body)
		}
		if got := titleOf(t, path); !strings.Contains(got, "Weak") {
			t.Errorf("a refused PUT was written: %s", got)
		}
	})
	t.Run("empty If-Match", func(t *testing.T) {
		// A client whose tag variable was empty sends "If-Match:" with nothing: refused, never applied as an
		// unconditional write.
		path := create(t, "Empty")
		body := xmlTitle("x")
		conn, err := net.Dial("tcp", strings.TrimPrefix(b.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: gw\r\nAuthorization: Basic ZGVtbzpkZW1v\r\nContent-Type: application/xml\r\n"+
			"If-Match:\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", path, len(body), body)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "If-Match") {
			t.Errorf("PUT with an empty If-Match: %d %s, want 400 naming If-Match", res.StatusCode, msg)
		}
		if got := titleOf(t, path); !strings.Contains(got, "Empty") {
			t.Errorf("a PUT with an empty If-Match was written: %s", got)
		}
	})
	t.Run("racing writers", func(t *testing.T) {
		path := create(t, "Raced")
		for round := range 3 {
			tag := read(t, a, path, "application/json", "identity")
			var (
				mu  sync.Mutex
				won int
			)
			parallel(8, func(i int) {
				gw := []*testGateway{a, b}[i%2]
				r, err := send(http.MethodPut, gw.URL+path, "demo", "demo", xmlTitle(fmt.Sprintf("writer %d of round %d", i, round)), "If-Match: "+tag)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case r.Status == http.StatusOK:
					won++
				case r.Status != http.StatusPreconditionFailed:
					t.Errorf("PUT: %d %s", r.Status, r.Body)
				}
			})
			if won != 1 {
				t.Fatalf("round %d: %d of 8 conditional writes of one version applied, want 1", round, won)
			}
		}
	})
	t.Run("CORS", func(t *testing.T) {
		pre := do(t, http.MethodOptions, a.URL+"/api2/demo/re/1", "", "", "", "Origin: https://app.example",
			"Access-Control-Request-Method: PUT", "Access-Control-Request-Headers: if-match")
		allow := pre.Header.Get("Access-Control-Allow-Headers")
		for _, h := range []string{"If-Match", "If-None-Match", "If-Unmodified-Since"} {
			if !strings.Contains(allow, h) {
				t.Errorf("a browser may not send %s: Access-Control-Allow-Headers %q", h, allow)
			}
		}
		if !strings.Contains(pre.Header.Get("Access-Control-Expose-Headers"), "ETag") {
			t.Errorf("a browser may not read ETag: %v", pre.Header)
		}
	})
}

func xmlTitle(title string) string {
	return `<requirement><fields><field><name>field_101</name><value>` + title + `</value></field></fields></requirement>`
}

// TestCoreIfMatch checks the mapping of If-Match before a request goes to the core: a tag of any
// representation the gateway made from a core tag becomes that core tag, several header lines become one
// list, and "*", weak tags, other tags and an empty If-Match (which the core refuses) go on as they came.
func TestCoreIfMatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want string
	}{
		{"xml", []string{`"0a1b2c"`}, `"0a1b2c"`},
		{"representations", []string{`"0a1b2c-json", "0a1b2c-gzip"`, `"0a1b2c-br","0a1b2c-json-gzip" , "0a1b2c-json-br"`},
			`"0a1b2c", "0a1b2c", "0a1b2c", "0a1b2c", "0a1b2c"`},
		{"star", []string{"*"}, "*"},
		{"weak", []string{`W/"0a1b2c-json"`}, `W/"0a1b2c-json"`},
		{"other suffix", []string{`"ab-cd"`, `"-json"`}, `"ab-cd", "-json"`},
		{"not a tag", []string{`0a1b2c-json`}, `0a1b2c-json`},
		{"empty", []string{""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h fasthttp.RequestHeader
			for _, v := range tc.in {
				h.Add("If-Match", v)
			}
			coreIfMatch(&h)
			got := h.PeekAll("If-Match")
			if len(got) != 1 || string(got[0]) != tc.want {
				t.Errorf("If-Match %q sent on as %q, want one line %q", tc.in, got, tc.want)
			}
		})
	}
	var h fasthttp.RequestHeader
	coreIfMatch(&h)
	if got := h.PeekAll("If-Match"); len(got) != 0 {
		t.Errorf("a request without If-Match gets %q", got)
	}
}
