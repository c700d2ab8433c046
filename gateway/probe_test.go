package gateway

import (
	"net/http"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// upstreamLog is an upstream in front of a core that sends no proof (another implementation of the interface),
// which records what reaches it and can answer the probe path itself.
type upstreamLog struct {
	mu       sync.Mutex
	probes   []http.Header // the headers of each request of the probe path
	requests int           // requests of any other path
	answer   int           // > 0: the status given to a probe instead of the core's
}

func (u *upstreamLog) counts() (probes, requests int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.probes), u.requests
}

func (u *upstreamLog) setAnswer(status int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.answer = status
}

func startUpstreamLog(t *testing.T) (*upstreamLog, string) {
	t.Helper()
	c := coretest.Start(t, coretest.Options{API: api.Options{NoAuthProof: true}})
	u := &upstreamLog{}
	front := frontCore(t, c.URL, func(w http.ResponseWriter, r *http.Request) bool {
		u.mu.Lock()
		answer := 0
		if r.URL.Path == "/api2/demo/re/field" {
			u.probes = append(u.probes, r.Header.Clone())
			answer = u.answer
		} else {
			u.requests++
		}
		u.mu.Unlock()
		switch {
		case answer == http.StatusFound:
			http.Redirect(w, r, "https://login.example/", answer)
		case answer > 0:
			http.Error(w, "probe refused by the test", answer)
		default:
			return false
		}
		return true
	})
	return u, front
}

// TestProbeVerification checks upstream.verify: probe in front of an upstream that sends no proof header: a
// credential is trusted after a 2xx to a GET of the account's verify path carrying its Authorization header
// and nothing else of the caller's request, and stays trusted for auth.ttl without another probe; any other
// answer to the probe is relayed (a 5xx as 502) and nothing of the caller's request is forwarded.
func TestProbeVerification(t *testing.T) {
	u, upstream := startUpstreamLog(t)
	opt := withConfig(Options{Upstreams: []string{upstream}, Verify: config.VerifyProbe, Cache: CacheOptions{Enabled: true}})
	opt.MaxUserFailures, opt.MaxIPFailures, opt.MaxUserFailuresAllIPs = 100, 100, 100
	gw := startGateway(t, opt)
	read := gw.URL + "/api2/demo/re/1"

	r := do(t, "GET", read, "demo", "demo", "", "Cookie: session=s3cret", "X-Client-Note: private", "X-Forwarded-For: 10.9.9.9")
	if r.Status != http.StatusOK {
		t.Fatalf("first read: %d %s", r.Status, r.Body)
	}
	if probes, requests := u.counts(); probes != 1 || requests != 1 {
		t.Fatalf("first read: %d probes and %d requests reached the upstream, want 1 and 1", probes, requests)
	}
	h := u.probes[0]
	if h.Get("Authorization") == "" {
		t.Error("the probe carried no Authorization header")
	}
	for _, name := range []string{"Cookie", "X-Client-Note", "X-Forwarded-For", "Forwarded", "X-Real-Ip"} {
		if v := h.Get(name); v != "" {
			t.Errorf("the probe carried %s: %q; want the credential alone", name, v)
		}
	}

	for i := range 3 {
		if r := do(t, "GET", read, "demo", "demo", ""); r.Status != http.StatusOK {
			t.Fatalf("read %d: %d", i, r.Status)
		}
	}
	if probes, _ := u.counts(); probes != 1 {
		t.Errorf("%d probes after four reads of one credential, want 1 (trusted for auth.ttl)", probes)
	}

	cases := []struct {
		name   string
		answer int // the upstream's answer to the probe; 0: the core's
		pass   string
		want   int
	}{
		{"wrong password", 0, "wrong", http.StatusUnauthorized},
		{"server error", http.StatusServiceUnavailable, "viewer", http.StatusBadGateway},
		{"forbidden", http.StatusForbidden, "viewer", http.StatusForbidden},
		{"not found", http.StatusNotFound, "viewer", http.StatusNotFound},
		{"redirect", http.StatusFound, "viewer", http.StatusFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u.setAnswer(tc.answer)
			defer u.setAnswer(0)
			_, before := u.counts()
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			if res := testsupport.Do(t, noRedirect, http.MethodGet, read, "viewer", tc.pass, ""); res.Status != tc.want {
				t.Errorf("status %d, want %d", res.Status, tc.want)
			}
			if _, after := u.counts(); after != before {
				t.Errorf("the caller's request reached the upstream after a probe answered %d", tc.answer)
			}
		})
	}
	// None of those answers proved anything: with the upstream's own answer back, viewer is probed again.
	before, _ := u.counts()
	if r := do(t, "GET", read, "viewer", "viewer", ""); r.Status != http.StatusOK {
		t.Fatalf("viewer's read: %d", r.Status)
	}
	if after, _ := u.counts(); after != before+1 {
		t.Errorf("viewer's read after the refused probes made %d probes, want 1", after-before)
	}
}
