package gateway

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
)

// rawClient neither asks for nor undoes compression, so the tests see the bytes the gateway sends.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func rawGet(t *testing.T, url, user, pass string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	res, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// TestConditionalAndCompressedReads checks HTTP caching and compression towards clients: a cacheable read has
// an entity tag and Cache-Control: private, no-cache; If-None-Match with it is answered 304 from the cache
// (after the credential is verified, and without asking the core); gzip and brotli callers get the body
// compressed, under tags of their own, with Vary naming Accept-Encoding; a write changes the tag.
func TestConditionalAndCompressedReads(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	url := gw.URL + "/api2/demo/re/1"
	first, plain := rawGet(t, url, "demo", "demo")
	tag := first.Header.Get("ETag")
	if first.StatusCode != 200 || tag == "" || first.Header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("first read: %d, ETag %q, Cache-Control %q", first.StatusCode, tag, first.Header.Get("Cache-Control"))
	}
	if v := strings.Join(first.Header.Values("Vary"), ", "); !strings.Contains(v, "Accept-Encoding") || !strings.Contains(v, "Accept") {
		t.Errorf("Vary %q", v)
	}
	before := gw.Stats().UpstreamRequests
	res, body := rawGet(t, url, "demo", "demo", "If-None-Match: "+tag)
	if res.StatusCode != http.StatusNotModified || len(body) != 0 || res.Header.Get("ETag") != tag || res.Header.Get("X-Cache") != "HIT" {
		t.Errorf("revalidation: %d, %d body bytes, ETag %q, X-Cache %q", res.StatusCode, len(body), res.Header.Get("ETag"), res.Header.Get("X-Cache"))
	}
	if n := gw.Stats().UpstreamRequests - before; n != 0 {
		t.Errorf("a revalidation reached the core (%d requests)", n)
	}
	for _, h := range []string{`If-None-Match: "other"`, `If-None-Match: W/"other", "x"`} {
		if res, _ := rawGet(t, url, "demo", "demo", h); res.StatusCode != 200 {
			t.Errorf("%s: status %d, want 200", h, res.StatusCode)
		}
	}
	for _, h := range []string{"If-None-Match: *", "If-None-Match: W/" + tag, `If-None-Match: "x", ` + tag} {
		if res, _ := rawGet(t, url, "demo", "demo", h); res.StatusCode != http.StatusNotModified {
			t.Errorf("%s: status %d, want 304", h, res.StatusCode)
		}
	}
	if res, _ := rawGet(t, url, "demo", "wrong", "If-None-Match: "+tag); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("revalidation with a wrong password: %d, want 401", res.StatusCode)
	}

	tags := map[string]bool{tag: true}
	for _, tc := range []struct {
		accept, coding string
		decode         func([]byte) ([]byte, error)
	}{
		{"gzip", "gzip", gunzip},
		{"br", "br", func(b []byte) ([]byte, error) { return fasthttp.AppendUnbrotliBytes(nil, b) }},
		{"gzip;q=0.5, br;q=1", "br", nil},
		{"br;q=0, gzip", "gzip", gunzip},
		{"identity", "", nil},
		{"gzip;q=0", "", nil},
	} {
		res, body := rawGet(t, url, "demo", "demo", "Accept-Encoding: "+tc.accept)
		if got := res.Header.Get("Content-Encoding"); got != tc.coding || res.Header.Get("X-Cache") != "HIT" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, X-Cache %q; want %q, HIT", tc.accept, got, res.Header.Get("X-Cache"), tc.coding)
			continue
		}
		if tc.decode != nil {
			got, err := tc.decode(body)
			if err != nil || !bytes.Equal(got, plain) {
				t.Errorf("Accept-Encoding %q: the body does not decode to the record (%v)", tc.accept, err)
			}
			if len(body) >= len(plain) {
				t.Errorf("Accept-Encoding %q: %d bytes compressed, %d plain", tc.accept, len(body), len(plain))
			}
		}
		tags[res.Header.Get("ETag")] = true
		if tc.coding != "" {
			if r, _ := rawGet(t, url, "demo", "demo", "Accept-Encoding: "+tc.accept, "If-None-Match: "+res.Header.Get("ETag")); r.StatusCode != http.StatusNotModified || r.Header.Get("Content-Encoding") != "" {
				t.Errorf("Accept-Encoding %q revalidated: %d", tc.accept, r.StatusCode)
			}
		}
	}
	if len(tags) != 3 {
		t.Errorf("tags of the identity, gzip and brotli forms: %v, want three different", tags)
	}
	jres, jbody := rawGet(t, url, "demo", "demo", "Accept: application/json", "Accept-Encoding: gzip")
	if js, err := gunzip(jbody); err != nil || !strings.HasPrefix(string(js), "{") || jres.Header.Get("ETag") == "" || tags[jres.Header.Get("ETag")] {
		t.Errorf("JSON with gzip: %v, ETag %q", err, jres.Header.Get("ETag"))
	}

	if r := do(t, http.MethodPut, url, "demo", "demo", `<requirement><fields><field><name>field_101</name><value>changed</value></field></fields></requirement>`); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if res, _ := rawGet(t, url, "demo", "demo", "If-None-Match: "+tag); res.StatusCode != 200 || res.Header.Get("ETag") == tag {
		t.Errorf("after a write, the old tag: %d, ETag %q (want 200 and a new tag)", res.StatusCode, res.Header.Get("ETag"))
	}
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func TestAcceptedEncodings(t *testing.T) {
	for v, want := range map[string]int{
		"": 0, "gzip": acceptGzip, "br": acceptBrotli, "gzip, deflate, br": acceptGzip | acceptBrotli,
		"*": acceptGzip | acceptBrotli, "br;q=0": 0, "GZIP; q=0.001": acceptGzip, "gzip;q=0.000": 0, "identity": 0,
		"x-gzip": acceptGzip, "br ; q=0.": 0,
		// q-values: a preference for gzip over brotli only when its weight is higher; "*" covers what is not named.
		"gzip;q=1, br;q=0.5": acceptGzip | acceptBrotli | preferGzip, "gzip;q=0.5, br;q=1": acceptGzip | acceptBrotli,
		"gzip, br": acceptGzip | acceptBrotli, "gzip;q=0.8, *;q=0.9": acceptGzip | acceptBrotli,
		"*;q=0.5, gzip": acceptGzip | acceptBrotli | preferGzip, "*, br;q=0": acceptGzip,
		"gzip;q=0.9, br;q=0.899": acceptGzip | acceptBrotli | preferGzip, "gzip;q=junk": acceptGzip,
	} {
		if got := acceptedEncodings([]byte(v)); got != want {
			t.Errorf("acceptedEncodings(%q) = %b, want %b", v, got, want)
		}
	}
}

// TestEncodingByQValue: of the codings a caller accepts, the one it weighs higher is served (brotli on a tie).
func TestEncodingByQValue(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	url := gw.URL + "/api2/demo/re/1"
	for accept, want := range map[string]string{
		"gzip;q=1, br;q=0.5": "gzip", "gzip;q=0.5, br;q=1": "br", "gzip, br": "br", "br;q=0, gzip": "gzip",
		"*;q=0.5, gzip": "gzip",
	} {
		res, _ := rawGet(t, url, "demo", "demo", "Accept-Encoding: "+accept)
		if got := res.Header.Get("Content-Encoding"); res.StatusCode != 200 || got != want {
			t.Errorf("Accept-Encoding %q: %d, Content-Encoding %q, want %q", accept, res.StatusCode, got, want)
		}
	}
}
