// Package route states the paths of the reqgate interface once, for the caller's documents, the gateway and the
// core alike: the route table (table.go: each route's path template, class, methods, first version, whether the
// gateway may cache it and whether the gateway alone answers it), the matcher built from it, and Parse, the one
// normalisation of a request target (/api{N}/{api_key}/...).
//
// The gateway normalises a target once, with Parse, and uses that one form for routing, the cache key and
// forwarding, so no two stages can read the same request differently; the class Parse gives is its metrics
// label and what its cache settings name. The core reads its own request path (net/http has decoded it) and
// dispatches on the route Match gives; the OpenAPI document renders the table.
package route

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/internal/digits"
)

// Limits of a request target.
const (
	MaxPath     = 4096
	MaxQuery    = 8192
	MaxSegments = 64
	MaxParams   = 100
)

// Route is a parsed, normalised request target.
type Route struct {
	Version  int      // 1 for /api, N for /api{N}; 0 when the path is not under /api
	APIKey   string   // decoded {api_key}
	Segments []string // decoded segments after the key
	Class    Class
	Path     string // normalised path, escaped: the form forwarded and keyed
	Query    string // normalised query: parameters decoded, re-escaped and sorted; "" when none
}

// URI is the normalised request target: Path plus "?"+Query when there is one.
func (r *Route) URI() string {
	if r.Query == "" {
		return r.Path
	}
	return r.Path + "?" + r.Query
}

// Base is the base URL path of an API route, "/api{N}/{api_key}/": the one request of an account the core
// answers only after authenticating the credential (with 404, as it names no resource). "" when the route is
// not under /api.
func (r *Route) Base() string {
	if r.APIKey == "" {
		return ""
	}
	// Path starts with "/api{N}/{escaped key}": both segments are plain, so the base is a prefix of Path.
	n := 0
	for i := 0; i < len(r.Path); i++ {
		if r.Path[i] == '/' {
			if n++; n == 3 {
				return r.Path[:i+1]
			}
		}
	}
	return r.Path + "/"
}

// Cacheable reports whether a successful GET of this route may be cached (the reads of docs/api.md).
func (r *Route) Cacheable() bool { return r.Class.Cacheable() }

// ParseID reads an id segment ({id}, {view_id}, {field_id}, a user's id) as the interface writes ids: 1 to 18
// decimal digits without a leading zero, naming a positive number. "01" names nothing, so that a record has one
// address (and one cache key at the gateway).
func ParseID(seg string) (int64, bool) {
	if seg == "" || seg[0] == '0' {
		return 0, false
	}
	n, ok := digits.Parse(seg, 18)
	return int64(n), ok
}

// Errors of Parse: ErrEmptySegment is 404 Not Found, the others are 400 Bad Request.
var (
	ErrTooLong  = errors.New("request target too long")
	ErrBadPath  = errors.New("malformed request path")
	ErrBadQuery = errors.New("malformed query string")
	// ErrEmptySegment is a path with an empty segment ("//"), a single trailing slash aside. The core, like the
	// mirrored service, reads it as naming no resource (404) rather than collapse it, and so does the gateway:
	// collapsed, it would answer what the core never would.
	ErrEmptySegment = errors.New("empty path segment")
)

// Parse normalises a raw request target (origin form, or absolute form whose scheme and host are dropped):
// percent-decodes each segment (an encoded '/' or a control character is an error, and so is an empty
// segment: ErrEmptySegment), drops "." segments, resolves "..", keeps a trailing slash, and re-escapes; the
// query is split on '&', each parameter decoded as the core decodes it (percent-escapes only: '+' is a plus
// sign) and re-escaped, and the parameters sorted.
func Parse(raw []byte) (Route, error) {
	p, q, err := splitTarget(string(raw))
	if err != nil {
		return Route{}, err
	}
	query, err := normQuery(q)
	if err != nil {
		return Route{}, err
	}
	path, segs, err := normPath(p)
	if err != nil {
		return Route{}, err
	}
	// Escaping can grow a target; the limits hold for the normalised form too, so it always parses again.
	if len(path) > MaxPath || len(query) > MaxQuery {
		return Route{}, ErrTooLong
	}
	r := Route{Path: path, Query: query}
	classify(&r, segs)
	return r, nil
}

// splitTarget splits a raw target into its path and query, without the fragment or the scheme and host of
// the absolute form, and checks the limits of both and that the path is absolute.
func splitTarget(s string) (path, query string, err error) {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if rest, ok := cutScheme(s); ok {
		s = rest
	}
	path, query, _ = strings.Cut(s, "?")
	if len(path) > MaxPath || len(query) > MaxQuery {
		return "", "", ErrTooLong
	}
	if path == "" || path[0] != '/' {
		return "", "", ErrBadPath
	}
	if strings.Contains(path, "//") {
		return "", "", ErrEmptySegment
	}
	return path, query, nil
}

// normPath normalises p, which starts with '/': it returns the normal form, escaped, and the decoded
// segments.
func normPath(p string) (string, []string, error) {
	if plainPath(p) {
		// Already normal: the segments are the path's own substrings and the path is kept as it is.
		segs := make([]string, 0, 8)
		for seg := range strings.SplitSeq(p[1:], "/") {
			if seg != "" {
				segs = append(segs, seg)
			}
		}
		if len(segs) > MaxSegments {
			return "", nil, ErrTooLong
		}
		return p, segs, nil
	}
	segs, trailing, err := segments(p)
	if err != nil {
		return "", nil, err
	}
	return joinPath(segs, trailing), segs, nil
}

// joinPath is the escaped path of decoded segments, with a trailing slash when the path names a directory
// (or has no segment: the root).
func joinPath(segs []string, trailing bool) string {
	var b strings.Builder
	for _, seg := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(seg))
	}
	if trailing || len(segs) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}

// pathSafe holds the bytes url.PathEscape leaves alone in a segment.
var pathSafe = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-_.~$&+:=@", byte(c)) >= 0
	}
	return t
}()

// plainPath reports whether p, which starts with '/', is already in normal form: only characters
// url.PathEscape leaves alone, no empty, "." or ".." segment (a single trailing slash aside).
func plainPath(p string) bool {
	start := 1 // of the segment being read
	for i := 1; i < len(p); i++ {
		switch c := p[i]; {
		case c == '/':
			if i == start || dotSegment(p[start:i]) {
				return false
			}
			start = i + 1
		case !pathSafe[c]:
			return false
		}
	}
	return !dotSegment(p[start:]) // the last segment may be empty: a trailing slash
}

// dotSegment reports whether seg is "." or "..".
func dotSegment(seg string) bool { return seg == "." || seg == ".." }

// cutScheme strips "http://host" or "https://host" from an absolute-form target.
func cutScheme(s string) (string, bool) {
	_, i, ok := absolute(s)
	switch {
	case !ok:
		return s, false
	case i == len(s):
		return "/", true
	case s[i] == '?':
		return "/" + s[i:], true
	}
	return s[i:], true
}

// Authority is the authority ("host:port") of an absolute-form request target ("http://host:port/path", RFC
// 9112 §3.2.2), which a server must take for the request's host instead of Host; ok is false for the origin
// form ("/path") every other request uses. It allocates nothing, for a check of every request.
func Authority[T string | []byte](target T) (authority T, ok bool) {
	authority, _, ok = absolute(target)
	return authority, ok
}

// absolute reads an absolute-form target, its scheme http or https in any case (RFC 3986 §3.1): the authority,
// and where what follows it (a path, a query or a fragment) starts, len(s) when nothing does.
func absolute[T string | []byte](s T) (authority T, rest int, ok bool) {
	for _, scheme := range [...]string{"http://", "https://"} {
		if len(s) < len(scheme) || !lowerEqual(s[:len(scheme)], scheme) {
			continue
		}
		for i := len(scheme); i < len(s); i++ {
			if c := s[i]; c == '/' || c == '?' || c == '#' {
				return s[len(scheme):i], i, true
			}
		}
		return s[len(scheme):], len(s), true
	}
	return s[:0], 0, false
}

// lowerEqual reports whether s, ASCII letters read in lower case, is lower.
func lowerEqual[T string | []byte](s T, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// segments decodes the segments of p, which starts with '/', drops the empty and "." ones and resolves ".."
// (never above the root). trailing reports whether the path names a directory: its last segment is empty,
// "." or "..", and a segment is left.
func segments(p string) (segs []string, trailing bool, err error) {
	segs = make([]string, 0, 8)
	dir := false
	for part := range strings.SplitSeq(p[1:], "/") {
		seg, err := decodeSegment(part)
		if err != nil {
			return nil, false, err
		}
		switch seg {
		case "", ".":
			dir = true
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			dir = true
		default:
			if len(segs) == MaxSegments {
				return nil, false, ErrTooLong
			}
			segs = append(segs, seg)
			dir = false
		}
	}
	return segs, dir && len(segs) > 0, nil
}

// decodeSegment percent-decodes one segment; a segment that decodes to a '/' or a control character is
// malformed.
func decodeSegment(part string) (string, error) {
	seg, err := url.PathUnescape(part)
	if err != nil {
		return "", ErrBadPath
	}
	for i := 0; i < len(seg); i++ {
		if c := seg[i]; c == '/' || c < 0x20 || c == 0x7f {
			return "", ErrBadPath
		}
	}
	return seg, nil
}

func normQuery(q string) (string, error) {
	if q == "" {
		return "", nil
	}
	var params []string
	for part := range strings.SplitSeq(q, "&") {
		if part == "" {
			continue
		}
		if len(params) == MaxParams {
			return "", ErrTooLong
		}
		k, v, hasEq := strings.Cut(part, "=")
		dk, err := url.PathUnescape(k)
		if err != nil {
			return "", ErrBadQuery
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return "", ErrBadQuery
		}
		if strings.ContainsFunc(dk+dv, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return "", ErrBadQuery
		}
		p := queryEscape(dk)
		if hasEq {
			p += "=" + queryEscape(dv)
		}
		params = append(params, p)
	}
	slices.Sort(params)
	return strings.Join(params, "&"), nil
}

// queryEscape escapes a decoded query parameter so that the core, which reads a query's percent-escapes
// only (a search condition is not a form: '+' is a plus sign), decodes it to the same text: a space is %20,
// never '+', and a plus sign is %2B.
func queryEscape(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

func classify(r *Route, segs []string) {
	r.Class = Unknown
	if len(segs) < 2 {
		return
	}
	v, ok := version(segs[0])
	if !ok {
		return
	}
	r.Version, r.APIKey, r.Segments = v, segs[1], segs[2:]
	if s := Match(r.Segments); s != nil {
		r.Class = s.Class
	}
}

// version reads "api" (1) or "api{N}" (N, 1..999).
func version(s string) (int, bool) {
	if s == "api" {
		return 1, true
	}
	n, ok := strings.CutPrefix(s, "api")
	if !ok || n == "" || len(n) > 3 || n[0] == '0' || strings.Trim(n, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.Atoi(n)
	if err != nil || v < 1 {
		return 0, false
	}
	return v, true
}
