// Package browsertest runs the gateway's JSON face from a real browser. Headless Chromium, driven with
// chromedp, loads a page from an origin of its own that reads, creates and updates requirements with fetch, so
// the gateway's CORS answers meet the browser that enforces them: the preflight of a request that sets
// Authorization, the headers a page may read, the refusal of an origin that is not allowed. A test with Go's
// HTTP client cannot show any of that, because only browsers enforce CORS.
//
// The test needs Chromium (`apt-get install -y chromium`; .ci/run installs it) and fails, never skips, when
// there is none: a CI without a browser would otherwise pass without checking anything.
package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/gatewaytest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// The page origins are other loopback addresses than the gateway's 127.0.0.1, so the browser sees origins
// that differ in the host, not only in the port.
const (
	appHost     = "127.0.0.2" // listed in cors.allowed_origins
	foreignHost = "127.0.0.3" // not listed
)

// TestBrowser runs the page of testdata/app.html from an allowed origin and testdata/foreign.html from another
// one against a gateway in front of the real core, and checks what the browser let the pages see.
func TestBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	c := coretest.Start(t, coretest.Options{})
	appOrigin := servePages(t, appHost)
	foreignOrigin := servePages(t, foreignHost)
	browser := startBrowser(t, chrome)

	t.Run("allowed origin", func(t *testing.T) {
		gw := serveGateway(t, c, appOrigin)
		checkApp(t, browser, c, gw, appOrigin, "app")
	})

	t.Run("other origin", func(t *testing.T) {
		gw := serveGateway(t, c, appOrigin)
		page := foreignOrigin + "/foreign.html?" + url.Values{"api": {gw.api}}.Encode()
		seen, tr := openPage(t, browser, page, "foreign")
		for _, id := range []string{"preflighted", "simple"} {
			if !strings.HasPrefix(seen[id], "rejected: TypeError") {
				t.Errorf("%s: the page saw %q, want fetch to reject", id, seen[id])
			}
		}
		// The rejections are the browser's CORS checks, not a network failure.
		if len(tr.corsErrors) != 2 {
			t.Errorf("the browser reported %d CORS errors, want one per fetch: %v", len(tr.corsErrors), tr.corsErrors)
		}
		t.Logf("CORS errors: %v", tr.corsErrors)
	})

	// allowed_origins "*": any origin, without the browser's credentials; a page that sets Authorization itself
	// still works, because the gateway names Authorization in Access-Control-Allow-Headers (a "*" there would
	// not cover it).
	t.Run("any origin", func(t *testing.T) {
		gw := serveGateway(t, c, "*")
		checkApp(t, browser, c, gw, foreignOrigin, "any-origin")
	})
}

// checkApp runs testdata/app.html from origin against gw and checks what the page saw, what the gateway
// logged and what the core stored.
func checkApp(t *testing.T, browser context.Context, c *coretest.Core, gw *testGateway, origin, name string) {
	t.Helper()
	title := "Written by a browser & <read> back from " + origin
	q := url.Values{"api": {gw.api}, "title": {title}, "max_body": {strconv.Itoa(gatewaytest.Options().MaxBodyBytes)}}
	// A fetch with the browser's credentials is allowed only for a listed origin (never with "*").
	anonymous := name == "app"
	if anonymous {
		q.Set("anonymous", "1")
	}
	page := origin + "/app.html?" + q.Encode()
	seen, tr := openPage(t, browser, page, name)
	if seen["state"] != "done" {
		t.Fatalf("the page failed: %q\nit saw: %v\nCORS errors: %v", seen["error"], seen, tr.corsErrors)
	}
	want := coreRecord(t, c, "1")
	id := seen["created-id"]
	for _, w := range []struct{ id, want string }{
		// The JSON mapping as a page meets it: values as strings, a picklist value as @id and #text.
		{"read-id", "1"},
		{"read-title", want.value("field_101")},
		{"read-status-id", want.valueID("field_103")},
		{"read-status-text", want.value("field_103")},
		{"read-version", want.value("version_number")},
		{"read-cache", "MISS"},
		{"reread-title", want.value("field_101")},
		{"create-status", "201"},
		{"create-location", gw.api + "/re/" + id},
		{"update-status", "200"},
		// A lost update refused: the page reads ETag and sends If-Match, which CORS must allow.
		{"stale-status", "412"},
		{"readback-title", title + " (updated)"},
		{"readback-status-id", "2"},
		{"readback-version", "2"},
		// The gateway's refusals reach the page with their JSON bodies: a 401 (a client asks for the password
		// again) and a 413 that the gateway answers before authentication.
		{"denied-status", "401"},
		{"large-status", "413"},
	} {
		if got := seen[w.id]; got != w.want {
			t.Errorf("%s: the page saw %q, want %q", w.id, got, w.want)
		}
	}
	if id == "" || id == "1" {
		t.Errorf("created id %q, want a new one", id)
	}
	if anonymous {
		// No Basic challenge reached the browser: it would have opened its login dialog and the fetch would
		// never have completed.
		if got := seen["anonymous-status"]; got != "401" || seen["anonymous-message"] == "" {
			t.Errorf("a fetch without credentials saw status %q, message %q; want 401 with the error message",
				got, seen["anonymous-message"])
		}
	}
	for _, id := range []string{"denied-message", "large-message"} {
		if seen[id] == "" {
			t.Errorf("%s: the page could not read the message of the refusal", id)
		}
	}
	if seen["created-etag"] == "" || seen["created-etag"] == "null" || seen["stale-message"] == "" {
		t.Errorf("the page could not read ETag (%q) or the 412's message (%q)", seen["created-etag"], seen["stale-message"])
	}
	// The write went through to the core, JSON turned into XML.
	if got, want := coreRecord(t, c, id).value("field_101"), title+" (updated)"; got != want {
		t.Errorf("the core holds the title %q, want %q", got, want)
	}

	// X-Request-Id and X-Cache are readable only because the gateway exposes them. The second read is the
	// browser's own revalidation (If-None-Match, answered 304 from the gateway's cache): the page gets the
	// body from the browser's cache and the headers of the 304.
	entries := parseAccessLog(t, gw.log.String())
	for _, id := range []string{"read-request-id", "reread-request-id"} {
		rid := seen[id]
		if rid == "" || !entries.has(func(e logEntry) bool { return e.RequestID == rid }) {
			t.Errorf("%s: the page saw X-Request-Id %q, not one of the gateway's access log:\n%s", id, rid, gw.log.String())
		}
	}
	if seen["read-request-id"] == seen["reread-request-id"] {
		t.Errorf("both reads show X-Request-Id %q", seen["read-request-id"])
	}
	if got := seen["reread-cache"]; got != "HIT" {
		t.Errorf("reread-cache: the page saw X-Cache %q, want HIT", got)
	}
	// Each call sets Authorization, so the browser asked first: one preflight per URL (it keeps the answer
	// for Access-Control-Max-Age), answered by the gateway itself without credentials.
	for _, path := range []string{"/re/1", "/re", "/re/" + id} {
		path = gw.apiPath + path
		if !entries.has(func(e logEntry) bool { return e.Method == "OPTIONS" && e.Path == path && e.Status == 204 }) {
			t.Errorf("no preflight of %s answered 204 in the access log:\n%s", path, gw.log.String())
		}
	}
	if len(tr.corsErrors) > 0 {
		t.Errorf("the browser reported CORS errors: %v", tr.corsErrors)
	}
	// The browser asks for compression and decodes it before the page reads the body.
	if len(tr.encodings) == 0 {
		t.Errorf("no response of the gateway came compressed")
	}
}

// record is a record as the core's XML has it.
type record struct {
	Fields []struct {
		Name  string `xml:"name"`
		Value struct {
			ID   string `xml:"id,attr"`
			Text string `xml:",chardata"`
		} `xml:"value"`
	} `xml:"fields>field"`
}

func (r record) value(name string) string {
	for _, f := range r.Fields {
		if f.Name == name {
			return f.Value.Text
		}
	}
	return ""
}

func (r record) valueID(name string) string {
	for _, f := range r.Fields {
		if f.Name == name {
			return f.Value.ID
		}
	}
	return ""
}

// coreRecord reads requirement id of the demo account from the core itself, past the gateway.
func coreRecord(t *testing.T, c *coretest.Core, id string) record {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.URL+"/api2/demo/re/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("demo", "demo")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("read re/%s from the core: %v", id, err)
	}
	defer res.Body.Close()
	var r record
	if err := xml.NewDecoder(res.Body).Decode(&r); err != nil || res.StatusCode != 200 {
		t.Fatalf("read re/%s from the core: status %d, %v", id, res.StatusCode, err)
	}
	return r
}

// chromiumPath finds the browser: $REQGATE_CHROMIUM, else chromium or a Chrome on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium; make test runs it, make check (-short) does not")
	}
	if p := os.Getenv("REQGATE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium for the browser test: install it with `apt-get install -y chromium` (.ci/run does), " +
		"or set REQGATE_CHROMIUM to a Chrome or Chromium binary")
	return ""
}

// startBrowser starts headless Chromium with a new profile and stops it when the test ends.
func startBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	output := &testsupport.LockedBuffer{}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // root in CI containers, where Chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.WindowSize(900, 700),
		// Without these the browser keeps reaching for the internet (updates, QUIC, sync), which test machines
		// without a network refuse many connections at a time.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.CombinedOutput(output),
	)
	// A bound for a stuck browser, far above a normal run.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc() // waits for the browser to exit, before t.TempDir removes its profile
		cancel()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v\n%s", path, err, output.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("browser output:\n%s", output.String())
		}
	})
	return ctx
}

// traffic is what the browser's network layer reported for a page.
type traffic struct {
	encodings  []string // Content-Encoding of responses that had one
	corsErrors []string // requests the browser stopped for CORS: "METHOD url: reason"
}

// openPage loads page in a new tab, waits until its script sets body[data-state], saves a screenshot as name,
// and returns the text of every element with an id (and "state") together with what the network layer
// reported.
func openPage(t *testing.T, browser context.Context, page, name string) (map[string]string, *traffic) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	var (
		mu      sync.Mutex
		methods = map[network.RequestID]string{} // "METHOD url" of each request
		tr      traffic
	)
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			methods[ev.RequestID] = ev.Request.Method + " " + ev.Request.URL
		case *network.EventResponseReceived:
			for k, v := range ev.Response.Headers {
				if s, ok := v.(string); ok && strings.EqualFold(k, "Content-Encoding") {
					tr.encodings = append(tr.encodings, s)
				}
			}
		case *network.EventLoadingFailed:
			if ev.CorsErrorStatus != nil {
				tr.corsErrors = append(tr.corsErrors, methods[ev.RequestID]+": "+string(ev.CorsErrorStatus.CorsError))
			}
		}
	})
	if err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("body[data-state]"))); err != nil {
		t.Fatalf("load %s: %v", page, err)
	}
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`(() => {
		const seen = {state: document.body.dataset.state};
		for (const el of document.querySelectorAll("[id]")) seen[el.id] = el.textContent;
		return seen;
	})()`))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	screenshot(t, ctx, name)
	mu.Lock()
	defer mu.Unlock()
	return seen, &tr
}

// screenshot saves what the tab shows as a PNG in $REQGATE_ARTIFACTS (a CI keeps that directory), else in the
// OS's temporary directory, and logs where.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	var f *os.File
	if dir := os.Getenv("REQGATE_ARTIFACTS"); dir != "" {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.Create(filepath.Join(dir, "browsertest-"+name+".png"))
		}
	} else {
		f, err = os.CreateTemp("", "reqgate-browsertest-"+name+"-*.png")
	}
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	_, err = f.Write(png)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	t.Logf("screenshot: %s", f.Name())
}

// servePages serves testdata on a free port of host until the test ends and returns its origin.
func servePages(t *testing.T, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("listen on %s for the page (Linux routes all of 127.0.0.0/8 to loopback): %v", host, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir("testdata")), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ErrServerClosed after Close
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// testGateway is a gateway in front of the core, with its access log.
type testGateway struct {
	api     string // the demo account's base URL, http://127.0.0.1:port/api2/demo
	apiPath string // its path, /api2/demo
	log     *testsupport.LockedBuffer
}

// serveGateway runs a gateway with its cache on and cors.allowed_origins set to origins on a free port of
// 127.0.0.1 until the test ends.
func serveGateway(t *testing.T, c *coretest.Core, origins ...string) *testGateway {
	t.Helper()
	gw := &testGateway{apiPath: "/api2/demo", log: &testsupport.LockedBuffer{}}
	_, url := gatewaytest.Serve(t, gatewaytest.With(gateway.Options{
		Upstreams:   []string{c.URL},
		Cache:       gateway.CacheOptions{Enabled: true},
		CORSOrigins: origins,
		Logger:      slog.New(slog.NewJSONHandler(gw.log, nil)),
	}))
	gw.api = url + gw.apiPath
	return gw
}

// logEntry is the part of an access log line the test looks at.
type logEntry struct {
	RequestID string `json:"request_id"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
}

type logEntries []logEntry

func (es logEntries) has(match func(logEntry) bool) bool {
	for _, e := range es {
		if match(e) {
			return true
		}
	}
	return false
}

// parseAccessLog reads the gateway's JSON log lines; lines other than the access log are left out.
func parseAccessLog(t *testing.T, log string) logEntries {
	t.Helper()
	var es logEntries
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var e struct {
			Msg string `json:"msg"`
			logEntry
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("access log line %q: %v", sc.Text(), err)
		}
		if e.Msg == "request" {
			es = append(es, e.logEntry)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("access log: %v", err)
	}
	return es
}
