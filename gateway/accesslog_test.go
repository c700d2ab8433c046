package gateway

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestAccessLogFields: each access-log line says how many body bytes were sent, the caller's User-Agent (none
// when it sent none, never the gateway's own client's), and which core answered: the core's address as
// upstream.url names it for a miss or a forward, none for a cache hit. Both ways of writing the access log
// (package accesslog, and slog without it) carry them.
func TestAccessLogFields(t *testing.T) {
	cores := []*coretest.Core{coretest.Start(t, coretest.Options{}), coretest.Start(t, coretest.Options{})}
	addrs := map[string]bool{}
	for _, c := range cores {
		u, err := url.Parse(c.URL)
		if err != nil {
			t.Fatal(err)
		}
		addrs[u.Host] = true
	}
	for _, writer := range []string{"accesslog", "slog"} {
		t.Run(writer, func(t *testing.T) {
			var logBuf testsupport.LockedBuffer
			opt := Options{Upstreams: []string{cores[0].URL, cores[1].URL}, Cache: CacheOptions{Enabled: true}}
			if writer == "accesslog" {
				opt.AccessLog = accesslog.New(&logBuf, "json")
				opt.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
			} else {
				opt.Logger = slog.New(slog.NewJSONHandler(&logBuf, nil))
			}
			gw := startGateway(t, opt)
			type want struct {
				cache, userAgent string
				core             bool // a core's address, else none
				bytes            bool // the body's length, else 0
			}
			for _, r := range []struct {
				name, method, userAgent string
				headers                 []string
				want                    want
			}{
				{"miss", http.MethodGet, "probe/1.0 (tests)", nil, want{"MISS", "probe/1.0 (tests)", true, true}},
				{"hit", http.MethodGet, "probe/1.0 (tests)", nil, want{"HIT", "probe/1.0 (tests)", false, true}},
				{"hit, compressed", http.MethodGet, "probe/1.0", []string{"Accept-Encoding", "gzip"}, want{"HIT", "probe/1.0", false, true}},
				{"head", http.MethodHead, "probe/2", nil, want{"HIT", "probe/2", false, false}},
				{"no user agent, forwarded", http.MethodGet, "", []string{"Cache-Control", "no-cache"}, want{"BYPASS", "", true, true}},
			} {
				t.Run(r.name, func(t *testing.T) {
					logBuf.Reset()
					req, err := http.NewRequest(r.method, gw.URL+"/api2/demo/re/1", nil)
					if err != nil {
						t.Fatal(err)
					}
					req.SetBasicAuth("demo", "demo")
					req.Header["User-Agent"] = []string{r.userAgent} // empty: net/http sends none
					req.Header.Set("Accept-Encoding", "identity")    // the body as sent, not decompressed
					for i := 0; i+1 < len(r.headers); i += 2 {
						req.Header.Set(r.headers[i], r.headers[i+1])
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d", resp.StatusCode)
					}
					rec := requestLine(t, &logBuf)
					if rec["cache"] != r.want.cache || rec["user_agent"] != r.want.userAgent {
						t.Errorf("cache %v, user_agent %q; want %s, %q", rec["cache"], rec["user_agent"], r.want.cache, r.want.userAgent)
					}
					core, _ := rec["upstream"].(string)
					if r.want.core && !addrs[core] || !r.want.core && core != "" {
						t.Errorf("upstream %q; want a core's address (%v): %v", core, r.want.core, addrs)
					}
					wantBytes := 0.0
					if r.want.bytes {
						wantBytes = float64(len(body))
						if wantBytes == 0 {
							t.Fatal("empty body")
						}
					}
					if rec["bytes"] != wantBytes {
						t.Errorf("bytes %v, want %v", rec["bytes"], wantBytes)
					}
				})
			}
		})
	}
}

// requestLine is the one access-log line in buf, decoded.
func requestLine(t *testing.T, buf *testsupport.LockedBuffer) map[string]any {
	t.Helper()
	var found []map[string]any
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" {
			found = append(found, rec)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d access-log lines, want 1:\n%s", len(found), buf.String())
	}
	return found[0]
}
