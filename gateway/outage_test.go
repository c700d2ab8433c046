package gateway

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// failingCore is a core that fails every request sent to it: it reads the request's head, then closes the
// connection without an answer, as a core that crashes or is killed under the request does. It counts the
// requests it was sent, by method.
type failingCore struct {
	URL string
	mu  sync.Mutex
	got map[string]int
}

func startFailingCore(t *testing.T) *failingCore {
	t.Helper()
	f := &failingCore{got: map[string]int{}}
	f.URL = "http://" + testsupport.ServeTCP(t, "127.0.0.1:0", f.fail)
	return f
}

func (f *failingCore) fail(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return
	}
	for {
		h, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if h == "\r\n" {
			break
		}
	}
	method, _, _ := strings.Cut(line, " ")
	f.mu.Lock()
	f.got[method]++
	f.mu.Unlock()
}

func (f *failingCore) sent(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[method]
}

// TestReadRetriedOnAnotherCore puts a core that fails every request it gets beside a live one: every read
// succeeds, the ones sent to the failing core through a second try at the live one; a write the failing core
// was sent is not sent again (its outcome is unknown) and is answered 502 with Retry-After.
func TestReadRetriedOnAnotherCore(t *testing.T) {
	live := coretest.Start(t, coretest.Options{})
	failing := startFailingCore(t)
	gw := startGateway(t, Options{Upstreams: []string{live.URL, failing.URL}})

	// The failing core is taken out at its first failure and tried again a second later: read until it has
	// failed three reads.
	reads := 0
	if !testsupport.WaitUntil(30*time.Second, func() bool {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			res := do(t, method, gw.URL+"/api2/demo/re/1", "demo", "demo", "")
			reads++
			if res.Status != http.StatusOK {
				t.Fatalf("%s %d with a failing core beside a live one: %d %s", method, reads, res.Status, res.Body)
			}
		}
		return failing.sent(http.MethodGet) >= 3
	}) {
		t.Fatalf("the failing core was sent %d reads of %d", failing.sent(http.MethodGet), reads)
	}

	const create = `<requirement><fields><field><name>field_101</name><value>w</value></field></fields></requirement>`
	failed := 0
	if !testsupport.WaitUntil(30*time.Second, func() bool {
		before := failing.sent(http.MethodPost)
		res := do(t, http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo", create)
		if failing.sent(http.MethodPost) == before {
			if res.Status != http.StatusCreated {
				t.Fatalf("write sent to the live core: %d %s", res.Status, res.Body)
			}
			return false
		}
		failed++
		if res.Status != http.StatusBadGateway || res.Header.Get("Retry-After") == "" {
			t.Fatalf("write sent to the failing core: %d Retry-After %q, want 502 with Retry-After (never sent again)",
				res.Status, res.Header.Get("Retry-After"))
		}
		return true
	}) {
		t.Fatal("no write reached the failing core")
	}
}

// TestCoreDownRetryAfter: with its only core refusing connections or failing every request, the gateway answers
// every request 502 with Retry-After, in the caller's representation (XML or JSON).
func TestCoreDownRetryAfter(t *testing.T) {
	for name, url := range map[string]string{
		"refused": "http://" + deadAddr(t),
		"failing": startFailingCore(t).URL,
	} {
		t.Run(name, func(t *testing.T) {
			gw := startGateway(t, Options{Upstreams: []string{url}})
			for _, tc := range []struct {
				method, accept, want string
			}{
				{http.MethodGet, "application/xml", "<message>"},
				{http.MethodGet, "application/json", `"message"`},
				{http.MethodPost, "application/xml", "<message>"},
				{http.MethodPost, "application/json", `"message"`},
			} {
				res := do(t, tc.method, gw.URL+"/api2/demo/re/1", "demo", "demo", "<requirement/>", "Accept: "+tc.accept)
				if res.Status != http.StatusBadGateway && res.Status != http.StatusServiceUnavailable {
					t.Errorf("%s %s: status %d, want 502 or 503", tc.method, tc.accept, res.Status)
				}
				if res.Header.Get("Retry-After") == "" {
					t.Errorf("%s %s: %d without Retry-After", tc.method, tc.accept, res.Status)
				}
				if !strings.Contains(res.Body, tc.want) {
					t.Errorf("%s %s: body %q is not the error in the caller's representation", tc.method, tc.accept, res.Body)
				}
			}
		})
	}
}
