// The version-2-only endpoints of docs/api.md: custom-object lookup, views, related items, field history
// and search. Version-1 requests never reach them (serveV2 is only called for version 2), so under /api/
// these paths fall to the version-1 router, which answers 404.

package api

import (
	"net/http"
	"slices"
	"strconv"
)

// serveV2 serves the version-2-only routes and reports whether the request was one of them:
//
//	GET object
//	GET <seg>/view                       GET <seg>/view/{id}    GET <seg>/view/{id}/search?<conditions>
//	GET <seg>/search?<conditions>        GET <seg>/{id}/related GET <seg>/{id}/fieldhistory/{field_id}
//
// Other methods on these paths get 405 with Allow: GET.
func (s *Server) serveV2(w http.ResponseWriter, r *http.Request, c *call) bool {
	if c.Version < 2 {
		return false
	}
	serve := v2Route(c.Parts)
	if serve == nil || c.Parts[0] == "user" {
		return false // users have no views, relations, history or search: the version-1 router's 404
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, methodNotAllowed(w, "GET"))
		return true
	}
	serve(s, w, r, c, c.Parts)
	return true
}

// v2Handler serves one version-2-only route; p is the path after the key.
type v2Handler func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string)

// v2Route is the handler of the version-2-only route p, nil when p is none. The handlers are given p rather
// than capture it, so that they are static functions and matching a route allocates nothing.
func v2Route(p []string) v2Handler {
	switch len(p) {
	case 1:
		if p[0] == "object" {
			return func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string) {
				s.getObjects(w, r, c)
			}
		}
	case 2:
		switch p[1] {
		case "view":
			return func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string) {
				s.getViews(w, r, c, p[0])
			}
		case "search":
			return func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string) {
				s.search(w, r, c, p[0])
			}
		}
	case 3:
		switch {
		case p[1] == "view":
			return func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string) {
				s.getView(w, r, c, p[0], p[2], false)
			}
		case p[2] == "related":
			return func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string) {
				s.getRelated(w, r, c, p[0], p[1])
			}
		}
	case 4:
		switch {
		case p[1] == "view" && p[3] == "search":
			return func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string) {
				s.getView(w, r, c, p[0], p[2], true)
			}
		case p[2] == "fieldhistory":
			return func(s *Server, w http.ResponseWriter, r *http.Request, c *call, p []string) {
				s.getHistory(w, r, c, p[0], p[1], p[3])
			}
		}
	}
	return nil
}

// newXMLSized starts a document with room for about n bytes, so large views and search results are
// written without regrowing the buffer.
func newXMLSized(n int) *xmlw {
	x := newXML()
	x.b = slices.Grow(x.b, n)
	return x
}

// elemStamp writes <name unit="GMT Timestamp">n</name>, the form of every timestamp in summaries and
// history.
func (x *xmlw) elemStamp(name string, n int64) {
	x.b = append(x.b, '<')
	x.b = append(x.b, name...)
	x.b = append(x.b, ` unit="GMT Timestamp">`...)
	x.b = strconv.AppendInt(x.b, n, 10)
	x.endTag(name)
}
