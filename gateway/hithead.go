package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/cache"
)

// hitHead is the response head of a connection's last cache hit, kept to be copied whole into the next hit of
// the same answer. A client that reads one resource again and again on a keep-alive connection (a page polling
// a record, a monitor) gets the same head each time but for its Age, request id and rate counts, which are set
// after the copy. Copying the head is a few byte copies; setting its headers one by one costs each of them
// fasthttp's own copy, a scan for line breaks and a search among the headers set before it.
//
// The head is known by the cache entry's ID (the memo keeps no entry alive), the representation written, and
// the gateway's own headers it holds (exchange.extra: their names, and Vary's values, must be the same; a value
// that differs, such as the request id, is set again after the copy). It is copied from the second hit of the
// same in a row, so a connection that reads ever other resources pays nothing but a comparison.
type hitHead struct {
	id    uint64                   // ID of the entry head was written from; 0: none
	form  uint8                    // its form (form.number)
	ready bool                     // head holds that answer's head
	head  *fasthttp.ResponseHeader // made on the first copy, reused after
	// The gateway's own headers in head: names (addHeader's are constants) and values, copied into vals
	// (ends[i] is where the i-th ends).
	keys []string
	vals []byte
	ends []int
}

// number tells apart the forms of an entry a hit may write: its content coding, and whether it is the 304 of a
// matching If-None-Match.
func (f form) number() uint8 {
	var n uint8
	switch {
	case f.coding == nil:
	case string(f.coding) == "gzip":
		n = 1
	default:
		n = 2
	}
	if f.notModified {
		n |= 4
	}
	return n
}

// value is the i-th of the gateway's own headers in head.
func (m *hitHead) value(i int) string {
	from := 0
	if i > 0 {
		from = m.ends[i-1]
	}
	return b2s(m.vals[from:m.ends[i]])
}

// fits reports whether head can stand for an answer with the gateway's own headers extra: the same names in
// the same order, and the same Vary values (which add to the response's, so cannot be set again).
func (m *hitHead) fits(extra []cache.Header) bool {
	if len(extra) != len(m.keys) {
		return false
	}
	for i, e := range extra {
		if e.Key != m.keys[i] || e.Key == "Vary" && e.Value != m.value(i) {
			return false
		}
	}
	return true
}

// keep notes the gateway's own headers the head was captured with.
func (m *hitHead) keep(extra []cache.Header) {
	m.keys, m.vals, m.ends = m.keys[:0], m.vals[:0], m.ends[:0]
	for _, e := range extra {
		m.keys = append(m.keys, e.Key)
		m.vals = append(m.vals, e.Value...)
		m.ends = append(m.ends, len(m.vals))
	}
}

// writeHit answers a fresh cache hit from e, as writeRead does, with X-Cache: HIT and the gateway's own headers
// queued so far: from the connection's hitHead when its last hit wrote the same answer.
func (g *Gateway) writeHit(x *exchange, e *cache.Entry) {
	h := &x.ctx.Response.Header
	if x.conn == nil || e.ID == 0 || e.ETag == "" {
		g.writeRead(x, e)
		h.SetCanonical(headerXCache, valueHit)
		return
	}
	m := &x.conn.hit
	f := x.formOf(e)
	n := f.number()
	if m.ready && m.id == e.ID && m.form == n && x.extraSet == 0 && m.fits(x.extra) {
		closing := h.ConnectionClose()
		m.head.CopyTo(h)
		if closing {
			h.SetConnectionClose()
		}
		if !f.notModified {
			x.ctx.Response.SetBodyRaw(f.body)
		}
		for i, e := range x.extra {
			if e.Value != m.value(i) {
				h.SetCanonical(s2b(e.Key), s2b(e.Value))
			}
		}
		x.extraSet = len(x.extra)
		return
	}
	writeForm(x.ctx, e, f)
	h.SetCanonical(headerXCache, valueHit)
	extraSet := x.extraSet
	x.writeExtra()
	if m.id != e.ID || m.form != n || extraSet != 0 {
		m.id, m.form, m.ready = e.ID, n, false
		return
	}
	if m.head == nil {
		m.head = new(fasthttp.ResponseHeader)
	}
	h.CopyTo(m.head)
	m.head.ResetConnectionClose()
	m.keep(x.extra)
	m.ready = true
}
