// Helpers of the documents of the version-2-only endpoints of docs/api.md (custom-object lookup, views, related
// items, field history and search), whose handlers are in their own files. Version-1 requests never reach them:
// the route table gives their routes version 2 (routes.go answers 404 under /api/).

package api

import (
	"slices"
	"strconv"
)

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
