package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/reqgate/reqgate/config"
)

// adminToken is the bearer token of admin.token_file, read again on a reload like the TLS files. Only its
// SHA-256 digest is kept: comparing digests in constant time tells a caller neither the token's bytes nor
// its length.
type adminToken struct {
	path   string
	digest atomic.Pointer[[sha256.Size]byte]
}

func loadAdminToken(path string) (*adminToken, error) {
	t := &adminToken{path: path}
	if err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload reads the token file again; a file that cannot be read or holds no token keeps the token in force.
func (t *adminToken) Reload() error {
	tok, err := config.ReadSecret(t.path)
	if err != nil {
		return fmt.Errorf("admin.token_file: %w", err)
	}
	d := sha256.Sum256([]byte(tok))
	t.digest.Store(&d)
	return nil
}

// allows reports whether req carries the token: Authorization: Bearer TOKEN (the scheme in any case, RFC 9110).
func (t *adminToken) allows(req *http.Request) bool {
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(d[:], t.digest.Load()[:]) == 1
}

// openAdminPaths answer without the token: what a monitor and a kubelet read, and nothing else.
var openAdminPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// guard refuses, before any endpoint runs, a request sent by a browser page (any Origin header: a page on
// another site may send a POST /purge to a listener it cannot read, and no admin client is a browser) with
// 403, and, with a token, a request to any endpoint but the open ones that lacks it with 401.
func (n *adminNode) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, ok := req.Header["Origin"]; ok {
			http.Error(w, "admin: requests from a browser (with an Origin header) are refused", http.StatusForbidden)
			return
		}
		if n.token != nil && !openAdminPaths[req.URL.Path] && !n.token.allows(req) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="reqgate admin"`)
			http.Error(w, "admin: Authorization: Bearer TOKEN (admin.token_file) required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// isLoopback reports whether only this host can reach a listener at addr: a loopback IP (not a wildcard such
// as :9090 or 0.0.0.0) or a Unix socket.
func isLoopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// redactedCmdline is pprof's /debug/pprof/cmdline with the passwords of the arguments masked: a Redis or
// PostgreSQL URL given on the command line would otherwise be read back by anyone who may profile.
func redactedCmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		args[i] = config.Redact(a)
	}
	fmt.Fprint(w, strings.Join(args, "\x00"))
}

// attachAdmin makes a reload read the admin token file again; a token file that no longer reads refuses
// the reload, and the token in force stays.
func (r *reloader) attachAdmin(n *adminNode) {
	if n != nil && n.token != nil {
		r.others = append(r.others, n.token)
	}
}
