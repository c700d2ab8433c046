// Package route parses and normalises the request target of the reqgate interface (/api{N}/{api_key}/...).
// The gateway normalises a target once, with Parse, and uses that one form for routing, the cache key and
// forwarding, so no two stages can read the same request differently.
package route

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Limits of a request target.
const (
	MaxPath     = 4096
	MaxQuery    = 8192
	MaxSegments = 64
	MaxParams   = 100
)

// Class names what a path addresses; it is the route label of metrics and logs.
type Class string

// The classes of the endpoints of docs/api.md.
const (
	Unknown    Class = "unknown"
	Throttle   Class = "rate_throttle_status" // answered by the gateway when it limits rates
	Object     Class = "object"
	Users      Class = "users"
	User       Class = "user"
	Collection Class = "collection" // POST /<segment>
	Record     Class = "record"
	Fields     Class = "fields"
	Views      Class = "views"
	View       Class = "view"
	ViewSearch Class = "view_search"
	Search     Class = "search"
	Related    Class = "related"
	History    Class = "history"
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
func (r *Route) Cacheable() bool {
	switch r.Class {
	case Object, Users, User, Record, Fields, Views, View, ViewSearch, Search, Related, History:
		return true
	}
	return false
}

// Errors of Parse; all of them are 400 Bad Request.
var (
	ErrTooLong  = errors.New("request target too long")
	ErrBadPath  = errors.New("malformed request path")
	ErrBadQuery = errors.New("malformed query string")
)

// Parse normalises a raw request target (origin form, or absolute form whose scheme and host are dropped):
// percent-decodes each segment (an encoded '/' or a control character is an error), drops empty and "."
// segments, resolves "..", keeps a trailing slash, and re-escapes; the query is split on '&', each parameter
// decoded and re-escaped, and the parameters sorted.
func Parse(raw []byte) (Route, error) {
	s := string(raw)
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if rest, ok := cutScheme(s); ok {
		s = rest
	}
	p, q, _ := strings.Cut(s, "?")
	if len(p) > MaxPath {
		return Route{}, ErrTooLong
	}
	if len(q) > MaxQuery {
		return Route{}, ErrTooLong
	}
	if p == "" || p[0] != '/' {
		return Route{}, ErrBadPath
	}
	query, err := normQuery(q)
	if err != nil {
		return Route{}, err
	}
	r := Route{Query: query}
	var segs []string
	if plainPath(p) {
		// Already normal: the segments are the path's own substrings and the path is kept as it is.
		segs = make([]string, 0, 8)
		for seg := range strings.SplitSeq(p[1:], "/") {
			if seg != "" {
				segs = append(segs, seg)
			}
		}
		if len(segs) > MaxSegments {
			return Route{}, ErrTooLong
		}
		r.Path = p
	} else {
		var trailing bool
		segs, trailing, err = segments(p)
		if err != nil {
			return Route{}, err
		}
		var b strings.Builder
		for _, seg := range segs {
			b.WriteByte('/')
			b.WriteString(url.PathEscape(seg))
		}
		if trailing || len(segs) == 0 {
			b.WriteByte('/')
		}
		r.Path = b.String()
	}
	// Escaping can grow a target; the limits hold for the normalised form too, so it always parses again.
	if len(r.Path) > MaxPath || len(r.Query) > MaxQuery {
		return Route{}, ErrTooLong
	}
	classify(&r, segs)
	return r, nil
}

// plainPath reports whether p is already in normal form: only characters url.PathEscape leaves alone, no
// empty, "." or ".." segment (a single trailing slash aside).
func plainPath(p string) bool {
	if p == "/" {
		return true
	}
	prevSlash := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '/':
			if prevSlash && i > 0 {
				return false
			}
			prevSlash = true
			continue
		case c == '.':
			// "." or ".." as a whole segment.
			if prevSlash && (i+1 == len(p) || p[i+1] == '/' || p[i+1] == '.' && (i+2 == len(p) || p[i+2] == '/')) {
				return false
			}
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_~$&+:=@", c) >= 0:
		default:
			return false
		}
		prevSlash = false
	}
	return true
}

// cutScheme strips "http://host" or "https://host" from an absolute-form target.
func cutScheme(s string) (string, bool) {
	for _, scheme := range []string{"http://", "https://"} {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			rest := s[len(scheme):]
			if i := strings.IndexAny(rest, "/?"); i >= 0 {
				if rest[i] == '?' {
					return "/" + rest[i:], true
				}
				return rest[i:], true
			}
			return "/", true
		}
	}
	return s, false
}

func segments(p string) (segs []string, trailing bool, err error) {
	segs = make([]string, 0, 8)
	rest := p[1:]
	for more := true; more; {
		var part string
		part, rest, more = strings.Cut(rest, "/")
		last := !more
		if part == "" {
			if last && len(segs) > 0 {
				trailing = true
			}
			continue
		}
		seg, err := url.PathUnescape(part)
		if err != nil {
			return nil, false, ErrBadPath
		}
		for j := 0; j < len(seg); j++ {
			if c := seg[j]; c == '/' || c < 0x20 || c == 0x7f {
				return nil, false, ErrBadPath
			}
		}
		trailing = false
		switch seg {
		case ".":
			trailing = last && len(segs) > 0
			continue
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			trailing = last && len(segs) > 0
			continue
		}
		if len(segs) == MaxSegments {
			return nil, false, ErrTooLong
		}
		segs = append(segs, seg)
	}
	return segs, trailing, nil
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
		dk, err := url.QueryUnescape(k)
		if err != nil {
			return "", ErrBadQuery
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return "", ErrBadQuery
		}
		if strings.ContainsFunc(dk+dv, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return "", ErrBadQuery
		}
		p := url.QueryEscape(dk)
		if hasEq {
			p += "=" + url.QueryEscape(dv)
		}
		params = append(params, p)
	}
	slices.Sort(params)
	return strings.Join(params, "&"), nil
}

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
	rest := r.Segments
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && rest[0] == "rate_throttle_status":
		r.Class = Throttle
	case len(rest) == 1 && rest[0] == "object":
		r.Class = Object
	case rest[0] == "user" && len(rest) == 1:
		r.Class = Users
	case rest[0] == "user" && len(rest) == 2:
		r.Class = User
	case len(rest) == 1:
		r.Class = Collection
	case len(rest) == 2 && rest[1] == "field":
		r.Class = Fields
	case len(rest) == 2 && rest[1] == "view":
		r.Class = Views
	case len(rest) == 2 && rest[1] == "search":
		r.Class = Search
	case len(rest) == 3 && rest[1] == "view":
		r.Class = View
	case len(rest) == 4 && rest[1] == "view" && rest[3] == "search":
		r.Class = ViewSearch
	case len(rest) == 2:
		r.Class = Record
	case len(rest) == 3 && rest[2] == "related":
		r.Class = Related
	case len(rest) == 4 && rest[2] == "fieldhistory":
		r.Class = History
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
