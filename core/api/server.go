// Package api serves the core's XML REST interface (docs/api.md) over net/http: the record operations of
// re, ft, uc and custom objects, field lists, users, and (in the version-2-only files) views, related items,
// field history and search, plus /healthz and /readyz.
//
// Every request under /api{N}/{api_key}/ is authenticated with HTTP Basic credentials before anything else
// is decided, so an unknown key, a missing record and an unknown path all look the same to a caller
// without valid credentials. Verified credentials are remembered for a short time (see auth.go) so that a
// request does not cost a bcrypt comparison.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/internal/budget"
	"github.com/reqgate/reqgate/internal/wire"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// Options tune a Server. The configured values (server.max_body_bytes, auth.ttl, core.schema_ttl) come resolved
// from package config, which alone holds their defaults; New refuses an impossible one.
type Options struct {
	// MaxBodyBytes is the largest request body accepted; larger ones get 413; > 0.
	MaxBodyBytes int64
	// AuthTTL is how long a verified credential is trusted without a new bcrypt check; 0 = never (no
	// credential cache).
	AuthTTL time.Duration
	// SchemaTTL is how long an account's objects, fields and users are kept in memory; 0 = never (no schema
	// cache).
	SchemaTTL time.Duration
	// Logger receives server errors (5xx with their detail). If nil, slog.Default().
	Logger *slog.Logger
	// Now is the clock for record timestamps and cache expiry. If nil, time.Now.
	Now func() time.Time
	// TrustedProxies are the networks of the proxies in front of the core (the gateway, a TLS-terminating
	// proxy) whose X-Forwarded-Proto and X-Forwarded-Host say the address the caller used, for the Location
	// of a created record. From anyone else those headers are ignored: a caller must not be able to point
	// Location elsewhere. Empty: never believed.
	TrustedProxies []netip.Prefix
	// NoAuthProof leaves out the wire.AuthProofHeader of authenticated answers (core.auth_proof: false): the core
	// then answers as any other implementation of the interface, for a gateway that verifies by probing.
	NoAuthProof bool
}

// Server is the core's http.Handler.
type Server struct {
	st     core.Store
	opt    Options
	log    *slog.Logger
	now    func() time.Time
	auth   *authCache
	schema *schemaCache
}

var _ http.Handler = (*Server)(nil)

// New returns a Server over st, or an error naming an impossible value of opt.
func New(st core.Store, opt Options) (*Server, error) {
	switch {
	case opt.MaxBodyBytes <= 0:
		return nil, fmt.Errorf("api: max body bytes %d: must be > 0", opt.MaxBodyBytes)
	case opt.AuthTTL < 0:
		return nil, fmt.Errorf("api: auth ttl %s: must not be negative (0 = never)", opt.AuthTTL)
	case opt.SchemaTTL < 0:
		return nil, fmt.Errorf("api: schema ttl %s: must not be negative (0 = never)", opt.SchemaTTL)
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &Server{st: st, opt: opt, log: opt.Logger, now: opt.Now}
	s.auth = newAuthCache(opt.AuthTTL, opt.Now)
	s.schema = newSchemaCache(opt.SchemaTTL, opt.Now)
	return s, nil
}

// FlushCaches forgets remembered credentials and account schemas, e.g. after an account file was applied
// to the store while the server runs.
func (s *Server) FlushCaches() {
	s.auth.flush()
	s.schema.flush()
}

// call is one authenticated API request, as the route handlers (routes.go) get it.
type call struct {
	Version int // 1 or 2
	Account core.Account
	User    core.User   // the authenticated user
	Base    string      // scheme://host/api or /api2 + /{key}: the base URL as the caller used it
	Parts   []string    // path segments after the key, e.g. ["re","12","related"]
	Object  core.Object // the kind the path's {segment} names, on a route that has one
	ID      int64       // the record id the path's {id} names, on a route that has one
}

// ServeHTTP routes a request and records its metrics.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &StatusWriter{ResponseWriter: w}
	route := "other"
	if r, cancel, ok := s.withBudget(sw, r, start); ok {
		route = s.serve(sw, r)
		cancel()
	}
	observe(r.Method, route, sw.Status(), start)
}

// withBudget gives r the deadline its gateway set in budget.Header: the time the gateway still waits for the
// answer, counted from received on this host's clock (so the two hosts' clocks need not agree). Every store call
// of the request runs under it, and a write whose deadline passes before it commits is rolled back and answered
// 503 (core.ErrExpired): no one waits for its answer any more, and applied later it could land over a newer
// write acknowledged meanwhile.
//
// The header is believed from anyone: it can only shorten the request's context (a deadline never extends a
// parent's), so a caller can do no more with it than give up on its own request. It returns false after
// answering a value that is malformed (400) or already spent (503).
func (s *Server) withBudget(w http.ResponseWriter, r *http.Request, received time.Time) (*http.Request, context.CancelFunc, bool) {
	vs := r.Header.Values(budget.Header)
	if len(vs) == 0 {
		return r, func() {}, true
	}
	left := budget.Max
	for _, v := range vs {
		d, err := budget.Parse(v)
		if err != nil {
			s.writeError(w, &httpError{http.StatusBadRequest, "Malformed " + budget.Header + " header: " + budget.ErrMalformed.Error() + "."})
			return nil, nil, false
		}
		left = min(left, d) // several values: the shortest
	}
	if left <= 0 {
		s.writeError(w, core.ErrExpired)
		return nil, nil, false
	}
	ctx, cancel := context.WithDeadline(r.Context(), received.Add(left))
	return r.WithContext(ctx), cancel, true
}

// serve handles one request and returns its route label for metrics: the class of its route (the gateway's
// label of the same request), "unknown" for a path that is no route, "healthz" or "readyz" for the probes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) string {
	path := r.URL.Path
	switch path {
	case "/healthz":
		writeText(w, http.StatusOK, "ok\n")
		return "healthz"
	case "/readyz":
		if err := s.st.Ping(r.Context()); err != nil {
			s.log.Warn("readyz: store does not answer", "err", err)
			writeText(w, http.StatusServiceUnavailable, "store unavailable\n")
		} else {
			writeText(w, http.StatusOK, "ready\n")
		}
		return "readyz"
	}
	version, verText, key, parts, ok := splitAPIPath(path)
	if !ok {
		s.writeError(w, errNoRoute)
		return string(route.Unknown)
	}
	rt := route.Match(parts)
	label := route.Unknown
	if rt != nil {
		label = rt.Class
	}
	if !wire.ValidAPIKey(key) {
		// Not the form of an api_key, so no account has it: the 401 of an unknown key, without asking
		// the store.
		s.writeError(w, errUnauthorized)
		return string(label)
	}
	acct, user, err := s.authenticate(r.Context(), r, key)
	if err != nil {
		s.writeError(w, err)
		return string(label)
	}
	if !s.opt.NoAuthProof {
		w.Header().Set(wire.AuthProofHeader, wire.AuthProof(key, r.Header.Get("Authorization")))
	}
	c := &call{
		Version: version,
		Account: acct,
		User:    user,
		Base:    s.baseURL(r) + "/api" + verText + "/" + key,
		Parts:   parts,
	}
	s.dispatch(w, r, c, rt)
	return string(label)
}

// splitAPIPath splits /api{N}/{key}/a/b into its version, the version text as written, the key and the
// segments after it. A trailing slash is ignored; an empty segment elsewhere or an unknown version fails.
func splitAPIPath(path string) (version int, verText, key string, parts []string, ok bool) {
	if strings.Contains(path, "//") {
		// An empty segment names nothing, wherever it is (the gateway answers the same 404).
		return 0, "", "", nil, false
	}
	rest, found := strings.CutPrefix(path, "/api")
	if !found {
		return 0, "", "", nil, false
	}
	verText, rest, found = strings.Cut(rest, "/")
	if !found {
		return 0, "", "", nil, false
	}
	switch verText {
	case "", "1":
		version = 1
	case "2":
		version = 2
	default:
		return 0, "", "", nil, false
	}
	key, rest, _ = strings.Cut(rest, "/")
	if key == "" {
		return 0, "", "", nil, false
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest != "" {
		parts = strings.Split(rest, "/")
		if len(parts) > 8 {
			return 0, "", "", nil, false
		}
		for _, p := range parts {
			if p == "" {
				return 0, "", "", nil, false
			}
		}
	}
	return version, verText, key, parts, true
}

// baseURL is scheme://host as the caller used it: the request's own, or behind a trusted proxy (the gateway)
// the public address its X-Forwarded-Proto and X-Forwarded-Host name, read by the rules the gateway reads its
// own proxies' by (package wire).
func (s *Server) baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if !wire.ValidHost(host) {
		// An HTTP/1.0 request may name no host, and net/http lets through hosts that are none (sub-delims,
		// ports past 65535, a zone id): the address the caller connected to stands for them, as at the
		// gateway, so that a Location names this server rather than "http:///..." or what a caller made up.
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host = a.String()
		}
	}
	if !s.fromTrustedProxy(r) {
		return scheme + "://" + host
	}
	if p := wire.ForwardedProto(r.Header.Get(wire.HeaderForwardedProto)); p != "" {
		scheme = p
	}
	if h := wire.ForwardedHost(r.Header.Get(wire.HeaderForwardedHost)); h != "" {
		host = h
	}
	return scheme + "://" + host
}

// fromTrustedProxy reports whether the request's connection comes from a network of Options.TrustedProxies.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	if len(s.opt.TrustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap().WithZone("")
	for _, p := range s.opt.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseID reads a positive integer id from a path segment or a value, written as the interface writes ids:
// decimal digits without a leading zero (route.ParseID, the rule the gateway keys records by).
func parseID(s string) (int64, bool) { return route.ParseID(s) }

// StatusWriter remembers the status code a handler wrote (for metrics here, and for the core's request log in
// cmd/reqgate).
type StatusWriter struct {
	http.ResponseWriter
	code int
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status is the status written, 200 when the handler wrote none.
func (w *StatusWriter) Status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// isCanceled reports whether err only says the caller went away.
func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
