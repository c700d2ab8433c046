package gateway

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway/certs"
	"github.com/reqgate/reqgate/gateway/certs/certstest"
)

// frontedCore is the real core behind a proxy that sees what the gateway sends it: the writes (anything but a
// GET), the Reqgate-Timeout of each, and, through hold, a chance to keep the credential check (the GET of the
// account's base URL) waiting.
type frontedCore struct {
	*coretest.Core
	URL    string // the front's: the gateway's upstream
	writes atomic.Int64
	mu     sync.Mutex
	budget []string // the Reqgate-Timeout lines of every request, joined with ",", in order
	hold   func()   // run before a credential check is answered; nil: none
}

func startFrontedCore(t *testing.T) *frontedCore {
	t.Helper()
	f := &frontedCore{Core: coretest.Start(t, coretest.Options{})}
	f.URL = frontCore(t, f.Core.URL, func(w http.ResponseWriter, r *http.Request) bool {
		f.mu.Lock()
		f.budget = append(f.budget, strings.Join(r.Header.Values("Reqgate-Timeout"), ","))
		hold := f.hold
		f.mu.Unlock()
		if r.Method != http.MethodGet {
			f.writes.Add(1)
		} else if r.URL.Path == "/api2/demo/" && hold != nil {
			hold()
		}
		return false
	})
	return f
}

func (f *frontedCore) setHold(h func()) {
	f.mu.Lock()
	f.hold = h
	f.mu.Unlock()
}

// title is the title of the demo's requirement 1 as the core has it, read from the core itself.
func (f *frontedCore) title(t *testing.T) string {
	t.Helper()
	body := get(t, f.Core.URL+"/api2/demo/re/1").Body
	const open = "<name>field_101</name>\n<label>Title</label>\n<value>"
	i := strings.Index(body, open)
	if i < 0 {
		t.Fatalf("no title in\n%s", body)
	}
	rest := body[i+len(open):]
	return rest[:strings.Index(rest, "</value>")]
}

const lateTitle = "Written late"

var lateBody = `<requirement><fields><field><name>field_101</name><value>` + lateTitle + `</value></field></fields></requirement>`

// A request that waited in the gateway longer than QueueTimeout (here: its credential check took that long) is
// answered 503 with Retry-After and never forwarded: the core sees no write, and the record keeps its value.
func TestQueueTimeoutNotForwarded(t *testing.T) {
	f := startFrontedCore(t)
	const queue = 100 * time.Millisecond
	g := startGateway(t, Options{Upstreams: []string{f.URL}, QueueTimeout: queue})
	// Held until the bound has passed since the check reached the core, which is later than the request
	// reached the gateway.
	f.setHold(func() {
		for start := time.Now(); time.Since(start) <= queue; {
			time.Sleep(queue / 4)
		}
	})
	before := f.title(t)

	res := do(t, http.MethodPut, g.URL+"/api2/demo/re/1", "demo", "demo", lateBody)
	if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(res.Body, "<error>") {
		t.Errorf("PUT that waited past the queue timeout: %d, Retry-After %q, body %q; want 503 with Retry-After and an <error>",
			res.Status, res.Header.Get("Retry-After"), res.Body)
	}
	if n := f.writes.Load(); n != 0 {
		t.Errorf("the core saw %d writes, want none", n)
	}
	if got := f.title(t); got != before {
		t.Errorf("title %q after the refused write, want %q", got, before)
	}

	// The credential is proved now: a prompt write goes through.
	f.setHold(nil)
	if res := do(t, http.MethodPut, g.URL+"/api2/demo/re/1", "demo", "demo", lateBody); res.Status != http.StatusOK {
		t.Errorf("prompt PUT: %d %q", res.Status, res.Body)
	}
}

// A request whose caller closed its connection before the gateway got to forward it is not forwarded, over
// plain HTTP and over TLS (whose caller sends a close_notify before its FIN). The caller here only shuts its
// sending side, so that it can read the answer: to the gateway's socket that looks as a caller that gave up
// and closed. The gateway is held in the credential check until then.
func TestCallerGoneNotForwarded(t *testing.T) {
	f := startFrontedCore(t)
	pair := certstest.Write(t, t.TempDir(), "gw")
	h, err := certs.Load(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	plain := startGateway(t, Options{Upstreams: []string{f.URL}})
	secure := startTLSGateway(t, Options{Upstreams: []string{f.URL}}, h)
	before := f.title(t)
	for _, tc := range []struct {
		name string
		dial func() (net.Conn, func() error, error) // the connection and its CloseWrite
	}{
		{"http", func() (net.Conn, func() error, error) {
			c, err := net.Dial("tcp", strings.TrimPrefix(plain.URL, "http://"))
			if err != nil {
				return nil, nil, err
			}
			return c, c.(*net.TCPConn).CloseWrite, nil
		}},
		{"https", func() (net.Conn, func() error, error) {
			raw, err := net.Dial("tcp", strings.TrimPrefix(secure, "https://"))
			if err != nil {
				return nil, nil, err
			}
			c := tls.Client(raw, &tls.Config{RootCAs: pair.Pool(), ServerName: "localhost"})
			if err := c.Handshake(); err != nil {
				raw.Close()
				return nil, nil, err
			}
			// The close_notify, then the FIN (tls.Conn's CloseWrite sends only the first).
			return c, func() error { return errors.Join(c.CloseWrite(), raw.(*net.TCPConn).CloseWrite()) }, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checking, closed := make(chan struct{}), make(chan struct{})
			var once sync.Once
			f.setHold(func() {
				once.Do(func() { close(checking) })
				<-closed
			})
			defer f.setHold(nil)
			c, closeWrite, err := tc.dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "PUT /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\nAuthorization: Basic ZGVtbzpkZW1v\r\n"+
				"Content-Type: application/xml\r\nContent-Length: %d\r\n\r\n%s", len(lateBody), lateBody)
			<-checking
			if err := closeWrite(); err != nil {
				t.Fatal(err)
			}
			close(closed)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("PUT of a caller gone: %d, want 503", res.StatusCode)
			}
			if n := f.writes.Load(); n != 0 {
				t.Errorf("the core saw %d writes, want none", n)
			}
			if got := f.title(t); got != before {
				t.Errorf("title %q after the caller left, want %q", got, before)
			}
		})
	}
}

// Every request the gateway forwards tells the core how long the gateway will wait for it: the upstream
// timeout less a tenth (a second at most), in milliseconds. What the caller sent under that name is replaced,
// every line of it, so a caller cannot give the core more time than the gateway waits, nor a value it refuses.
func TestBudgetSentToCore(t *testing.T) {
	f := startFrontedCore(t)
	g := startGateway(t, Options{Upstreams: []string{f.URL}, UpstreamTimeout: 5 * time.Second})
	for _, sent := range [][]string{nil, {"999999999"}, {"999999999", "junk"}} {
		req, err := http.NewRequest(http.MethodPut, g.URL+"/api2/demo/re/1", strings.NewReader(lateBody))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("demo", "demo")
		req.Header.Set("Content-Type", "application/xml")
		for _, v := range sent {
			req.Header.Add("Reqgate-Timeout", v)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("PUT with Reqgate-Timeout %q: %d", sent, res.StatusCode)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.budget) == 0 {
		t.Fatal("the core saw no request")
	}
	for i, b := range f.budget {
		if b != "4500" {
			t.Errorf("request %d reached the core with Reqgate-Timeout %q, want 4500 (5s less a tenth)", i, b)
		}
	}
}
