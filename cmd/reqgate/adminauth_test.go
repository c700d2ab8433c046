package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// adminDo sends one request to the admin listener with the headers given (name, value, ...).
func adminDo(t *testing.T, method, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// writeToken replaces the token file atomically, as a Kubernetes Secret update does.
func writeToken(t *testing.T, path, token string) {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// TestAdminRefusesBrowserRequests sends POST /purge with an Origin header, as any web page open in a browser
// on the admin host could (a CORS simple request, which the browser sends without asking): it is refused
// with 403 and purges nothing, on every endpoint; the same purge without Origin works.
func TestAdminRefusesBrowserRequests(t *testing.T) {
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"))
	waitReady(t, p, "http://"+admin+"/readyz")
	read := "http://" + listen + "/api2/demo/re/1"
	do(t, http.MethodGet, read, "demo", "")
	for _, origin := range []string{"https://evil.example", "null"} {
		if resp, body := adminDo(t, http.MethodPost, "http://"+admin+"/purge?account=demo", "Origin", origin); resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST /purge with Origin %s: %d %q, want 403", origin, resp.StatusCode, body)
		}
	}
	if resp, _ := do(t, http.MethodGet, read, "demo", ""); resp.Header.Get("X-Cache") != "HIT" {
		t.Errorf("read after the refused purges: X-Cache %q, want HIT (nothing purged)", resp.Header.Get("X-Cache"))
	}
	if resp, _ := adminDo(t, http.MethodGet, "http://"+admin+"/metrics", "Origin", "https://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /metrics with Origin: %d, want 403", resp.StatusCode)
	}
	if resp, body := adminDo(t, http.MethodPost, "http://"+admin+"/purge?account=demo"); resp.StatusCode != http.StatusOK {
		t.Errorf("POST /purge without Origin: %d %q, want 200", resp.StatusCode, body)
	}
}

// TestAdminToken sets admin.token_file: /purge and the profiler need the bearer token (401 with
// WWW-Authenticate otherwise), /healthz, /readyz and /metrics do not; a token file rewritten and reloaded
// (SIGHUP) puts the new token in force and the old one out; an emptied file refuses the reload and keeps it.
func TestAdminToken(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	writeToken(t, tokenFile, "first-token-0123456789")
	n := startReloadable(t, "admin:\n  pprof: true\n  token_file: "+tokenFile+"\n")
	base := "http://" + n.admin
	purge := base + "/purge?account=demo"
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	for _, tc := range []struct {
		name   string
		method string
		url    string
		header []string
		want   int
	}{
		{"purge without token", http.MethodPost, purge, nil, http.StatusUnauthorized},
		{"purge with a wrong token", http.MethodPost, purge, bearer("first-token-012345678"), http.StatusUnauthorized},
		{"purge with Basic credentials", http.MethodPost, purge, []string{"Authorization", "Basic ZGVtbzpkZW1v"}, http.StatusUnauthorized},
		{"purge with the token", http.MethodPost, purge, bearer("first-token-0123456789"), http.StatusOK},
		{"purge, scheme in lower case", http.MethodPost, purge, []string{"Authorization", "bearer first-token-0123456789"}, http.StatusOK},
		{"pprof without token", http.MethodGet, base + "/debug/pprof/cmdline", nil, http.StatusUnauthorized},
		{"pprof with the token", http.MethodGet, base + "/debug/pprof/cmdline", bearer("first-token-0123456789"), http.StatusOK},
		{"unknown path without token", http.MethodGet, base + "/nothing", nil, http.StatusUnauthorized},
		{"healthz without token", http.MethodGet, base + "/healthz", nil, http.StatusOK},
		{"readyz without token", http.MethodGet, base + "/readyz", nil, http.StatusOK},
		{"metrics without token", http.MethodGet, base + "/metrics", nil, http.StatusOK},
	} {
		resp, body := adminDo(t, tc.method, tc.url, tc.header...)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %q, want %d", tc.name, resp.StatusCode, body, tc.want)
		}
		if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q, want Bearer", tc.name, resp.Header.Get("WWW-Authenticate"))
		}
	}

	writeToken(t, tokenFile, "second-token-9876543210")
	n.reload(t, "applied", 1)
	if resp, _ := adminDo(t, http.MethodPost, purge, bearer("second-token-9876543210")...); resp.StatusCode != http.StatusOK {
		t.Errorf("the new token after the reload: %d, want 200", resp.StatusCode)
	}
	if resp, _ := adminDo(t, http.MethodPost, purge, bearer("first-token-0123456789")...); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old token after the reload: %d, want 401", resp.StatusCode)
	}

	if err := os.WriteFile(tokenFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n.reload(t, "refused", 1)
	if resp, _ := adminDo(t, http.MethodPost, purge, bearer("second-token-9876543210")...); resp.StatusCode != http.StatusOK {
		t.Errorf("the token in force after a refused reload: %d, want 200", resp.StatusCode)
	}
	if resp, _ := adminDo(t, http.MethodPost, purge, []string{"Authorization", "Bearer "}...); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an empty token after the emptied file: %d, want 401", resp.StatusCode)
	}
}

// TestAdminTokenEveryRole checks that the core and gateway roles ask for the token on their admin listeners
// too.
func TestAdminTokenEveryRole(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	writeToken(t, tokenFile, "role-token-0123456789")
	for _, role := range []string{"core", "gateway"} {
		t.Run(role, func(t *testing.T) {
			listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
			args := []string{role, "--listen", listen, "--admin-listen", admin, "--set", "admin.token_file=" + tokenFile}
			if role == "core" {
				args = append(args, "--db", filepath.Join(t.TempDir(), "r.db"))
			} else {
				args = append(args, "--upstream", "http://"+testbin.FreeAddr(t))
			}
			p := start(t, args...)
			waitReady(t, p, "http://"+admin+"/healthz")
			purge := "http://" + admin + "/purge?account=demo"
			if resp, _ := adminDo(t, http.MethodPost, purge); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("POST /purge without token: %d, want 401", resp.StatusCode)
			}
			// With the token the purge runs: a core's empty store holds no account demo (404); a gateway cannot
			// tell, and purges it.
			want := http.StatusOK
			if role == "core" {
				want = http.StatusNotFound
			}
			if resp, _ := adminDo(t, http.MethodPost, purge, "Authorization", "Bearer role-token-0123456789"); resp.StatusCode != want {
				t.Errorf("POST /purge with the token: %d, want %d", resp.StatusCode, want)
			}
		})
	}
}

// TestAdminNotLoopback binds the admin listener on every interface, as a container does: without a token,
// /purge and the profiler are not served (404, said once in the log) while /metrics and the probes are;
// with a token they are served to its holder.
func TestAdminNotLoopback(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	writeToken(t, tokenFile, "wide-token-0123456789")
	for _, withToken := range []bool{false, true} {
		_, port, _ := net.SplitHostPort(testbin.FreeAddr(t))
		admin := "127.0.0.1:" + port
		args := []string{"gateway", "--listen", testbin.FreeAddr(t), "--admin-listen", "0.0.0.0:" + port,
			"--upstream", "http://" + testbin.FreeAddr(t), "--set", "admin.pprof=true"}
		if withToken {
			args = append(args, "--set", "admin.token_file="+tokenFile)
		}
		p := start(t, args...)
		waitReady(t, p, "http://"+admin+"/healthz")
		auth := []string{"Authorization", "Bearer wide-token-0123456789"}
		want := http.StatusNotFound
		if withToken {
			want = http.StatusOK
		}
		if resp, _ := adminDo(t, http.MethodPost, "http://"+admin+"/purge?account=demo", auth...); resp.StatusCode != want {
			t.Errorf("token %v: POST /purge: %d, want %d", withToken, resp.StatusCode, want)
		}
		if resp, _ := adminDo(t, http.MethodGet, "http://"+admin+"/debug/pprof/goroutine?debug=1", auth...); resp.StatusCode != want {
			t.Errorf("token %v: /debug/pprof/goroutine: %d, want %d", withToken, resp.StatusCode, want)
		}
		if resp, _ := adminDo(t, http.MethodGet, "http://"+admin+"/metrics"); resp.StatusCode != http.StatusOK {
			t.Errorf("token %v: /metrics: %d, want 200", withToken, resp.StatusCode)
		}
		said := strings.Count(p.Output.String(), "admin listener is not loopback")
		if !withToken && said != 1 {
			t.Errorf("without a token the log says %d times that /purge and pprof are off, want once", said)
		}
		if withToken && said != 0 {
			t.Errorf("with a token the log says %d times that /purge and pprof are off, want never", said)
		}
	}
}

// TestPProfCmdlineHidesPasswords profiles a gateway started with a Redis password in its --redis URL:
// /debug/pprof/cmdline shows the URL without the password.
func TestPProfCmdlineHidesPasswords(t *testing.T) {
	admin := testbin.FreeAddr(t)
	p := start(t, "gateway", "--listen", testbin.FreeAddr(t), "--admin-listen", admin, "--upstream", "http://"+testbin.FreeAddr(t),
		"--redis", "redis://reqgate:cmdline-secret-pw@"+testbin.FreeAddr(t)+"/0", "--set", "admin.pprof=true")
	waitReady(t, p, "http://"+admin+"/healthz")
	resp, body := adminDo(t, http.MethodGet, "http://"+admin+"/debug/pprof/cmdline")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "redis://reqgate:") {
		t.Fatalf("/debug/pprof/cmdline: %d %q", resp.StatusCode, body)
	}
	if strings.Contains(body, "cmdline-secret-pw") {
		t.Errorf("/debug/pprof/cmdline shows the Redis password: %q", body)
	}
}

// TestRedisPasswordFile starts `serve` in front of a Redis that asks for a password, given only in
// --redis-password-file: the process authenticates (/readyz pings Redis), and the password is not on its
// command line.
func TestRedisPasswordFile(t *testing.T) {
	rds := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rds.Addr})
	if err := rdb.ConfigSet(context.Background(), "requirepass", "file-secret-pw").Err(); err != nil {
		t.Fatal(err)
	}
	_ = rdb.Close()
	pwFile := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(pwFile, []byte("file-secret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	admin := testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", testbin.FreeAddr(t), "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"),
		"--redis", rds.URL(), "--redis-password-file", pwFile, "--set", "admin.pprof=true")
	waitReady(t, p, "http://"+admin+"/readyz")
	if _, body := adminDo(t, http.MethodGet, "http://"+admin+"/debug/pprof/cmdline"); strings.Contains(body, "file-secret-pw") {
		t.Errorf("/debug/pprof/cmdline shows the password: %q", body)
	}
}
