package gateway

import (
	"sync"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// maxRoutes bounds the parsed-target memo; when full it starts over.
const maxRoutes = 10_000

// routes remembers the parse of recent request targets: callers ask for the same few targets again and
// again, and a parse (decoding, normalising, classifying) costs more than a map lookup. A Route is a pure
// function of the target's bytes and is never changed once parsed, so one parse serves every request of
// that target. Malformed targets are not remembered.
type routes struct {
	mu sync.RWMutex
	m  map[string]route.Route
}

func newRoutes() *routes { return &routes{m: make(map[string]route.Route)} }

func (rs *routes) parse(target []byte) (route.Route, error) {
	rs.mu.RLock()
	r, ok := rs.m[string(target)]
	rs.mu.RUnlock()
	if ok {
		return r, nil
	}
	r, err := route.Parse(target)
	if err != nil {
		return r, err
	}
	rs.mu.Lock()
	if len(rs.m) >= maxRoutes {
		clear(rs.m)
	}
	rs.m[string(target)] = r
	rs.mu.Unlock()
	return r, nil
}
