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
	p := c.Parts
	var serve func()
	switch {
	case len(p) == 1 && p[0] == "object":
		serve = func() { s.getObjects(w, r, c) }
	case len(p) == 2 && p[1] == "view":
		serve = func() { s.getViews(w, r, c, p[0]) }
	case len(p) == 3 && p[1] == "view":
		serve = func() { s.getView(w, r, c, p[0], p[2], false) }
	case len(p) == 4 && p[1] == "view" && p[3] == "search":
		serve = func() { s.getView(w, r, c, p[0], p[2], true) }
	case len(p) == 2 && p[1] == "search":
		serve = func() { s.search(w, r, c, p[0]) }
	case len(p) == 3 && p[2] == "related":
		serve = func() { s.getRelated(w, r, c, p[0], p[1]) }
	case len(p) == 4 && p[2] == "fieldhistory":
		serve = func() { s.getHistory(w, r, c, p[0], p[1], p[3]) }
	default:
		return false
	}
	if p[0] == "user" {
		return false // users have no views, relations, history or search: the version-1 router's 404
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, methodNotAllowed(w, "GET"))
		return true
	}
	serve()
	return true
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
