package gateway

import (
	"sync"
	"sync/atomic"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// maxRoutes bounds the parsed-target memo; when full it starts over.
const maxRoutes = 10_000

// routes remembers the parse of recent request targets: callers ask for the same few targets again and
// again, and a parse (decoding, normalising, classifying) costs more than a map lookup. A Route is a pure
// function of the target's bytes and is never changed once parsed, so one parse serves every request of
// that target. Malformed targets are not remembered. The memo is a sync.Map, whose lookups of a known key
// write nothing shared (a read lock would: every request on every CPU would move its cache line).
type routes struct {
	m sync.Map // string -> route.Route
	n atomic.Int64
}

func newRoutes() *routes { return new(routes) }

func (rs *routes) parse(target []byte) (route.Route, error) {
	if r, ok := rs.m.Load(b2s(target)); ok {
		return r.(route.Route), nil
	}
	r, err := route.Parse(target)
	if err != nil {
		return r, err
	}
	if rs.n.Add(1) > maxRoutes {
		rs.m.Clear()
		rs.n.Store(1)
	}
	rs.m.Store(string(target), r)
	return r, nil
}
