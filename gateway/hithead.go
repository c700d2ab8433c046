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
// The head is known by the cache entry's ID (the memo keeps no entry alive) and the representation written.
// It is copied from the second hit of the same in a row, so a connection that reads ever other resources pays
// nothing but a comparison.
type hitHead struct {
	id    uint64                   // ID of the entry head was written from; 0: none
	form  uint8                    // its representation (hitForm)
	ready bool                     // head holds that answer's head
	head  *fasthttp.ResponseHeader // made on the first copy, reused after
}

// hitForm numbers the representations of an entry a hit may write: its content coding, and whether it is the
// 304 of a matching If-None-Match.
func hitForm(coding []byte, notModified bool) uint8 {
	var f uint8
	switch {
	case coding == nil:
	case string(coding) == "gzip":
		f = 1
	default:
		f = 2
	}
	if notModified {
		f |= 4
	}
	return f
}

// writeHit answers a fresh cache hit from e, as writeRead does, with X-Cache: HIT: from the connection's hitHead
// when its last hit wrote the same answer.
func (g *Gateway) writeHit(x *exchange, e *cache.Entry) {
	h := &x.ctx.Response.Header
	if x.conn == nil || e.ID == 0 || e.ETag == "" {
		g.writeRead(x, e)
		h.SetCanonical(headerXCache, valueHit)
		return
	}
	m := &x.conn.hit
	body, _, coding, notModified := x.representation(e)
	form := hitForm(coding, notModified)
	if m.ready && m.id == e.ID && m.form == form {
		closing := h.ConnectionClose()
		m.head.CopyTo(h)
		if closing {
			h.SetConnectionClose()
		}
		if !notModified {
			x.ctx.Response.SetBodyRaw(body)
		}
		return
	}
	g.writeRead(x, e)
	h.SetCanonical(headerXCache, valueHit)
	if m.id != e.ID || m.form != form {
		m.id, m.form, m.ready = e.ID, form, false
		return
	}
	if m.head == nil {
		m.head = new(fasthttp.ResponseHeader)
	}
	h.CopyTo(m.head)
	m.head.ResetConnectionClose()
	m.ready = true
}
