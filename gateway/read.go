package gateway

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/internal/wire"
)

// fetched is the outcome of one upstream read, shared by the requests of a single flight.
type fetched struct {
	entry    *cache.Entry // the upstream's answer, copied; nil when err is set
	stored   bool         // entry was stored in the cache
	personal bool         // the upstream meant the answer for its caller only (private, Set-Cookie)
	err      error
	took     time.Duration
	core     string // the core that answered or failed (coreOf)
}

// read serves a cacheable GET or HEAD (the same answer, without the body) of a verified credential: a fresh entry (HIT), otherwise the upstream's
// answer (MISS, or BYPASS when the caller sent Cache-Control: no-cache), fetched once for all concurrent
// requests of the same key, stored when it is a 200 the upstream allows to be stored. When the upstream
// fails, the caller gets the entry still within stale_if_error (STALE). A JSON read has entries of
// its own; its XML form, cached or fetched, is translated once.
func (g *Gateway) read(x *exchange) {
	// A JSON hit needs only the JSON key: the XML key is built when it is needed. Both live in the exchange's
	// buffers: a hit allocates no key; a key that is stored or shared by a flight is copied first.
	key, jsonKey := "", ""
	if x.json {
		jsonKey = g.cacheKey(x, x.jsonKeyBuf[:0], "json")
	}
	xmlKey := func() string {
		if key == "" {
			key = g.cacheKey(x, x.keyBuf[:0], "xml")
		}
		return key
	}
	bypass := x.noCache
	if !bypass {
		// The span is ended without a defer: this is every hit's path.
		span := g.startSpan(x, "gateway.cache", trace.SpanKindInternal)
		l, ok := g.lookup(x, xmlKey, jsonKey)
		x.endSpan(span)
		if d, short := g.opt.Cache.TTLByRoute[x.rt.Class]; short && l.Age >= d {
			// Older than its route's TTL: asked of the upstream again (it may still stand in as stale).
			l.Fresh = false
		}
		if ok && l.Fresh {
			x.cacheRes = cacheHit
			g.writeHit(x, l.Entry)
			setAge(&x.ctx.Response.Header, l.Age)
			return
		}
	}
	key = strings.Clone(xmlKey())
	// Every caller here is verified: the callers of one scope share a flight.
	v, _, shared := g.flight.Do(key, func() (any, error) { return g.fetch(x, key), nil })
	f := v.(*fetched)
	if shared {
		flightShared.Inc()
		if f.err == nil && (f.entry.Status == fasthttp.StatusUnauthorized || f.personal) {
			// Another credential of the scope was refused (its password changed since it was proved), or the
			// answer was meant for its caller alone (private, Set-Cookie): this caller is answered on its own.
			f = g.fetch(x, key)
		}
	}
	x.upstream = f.took
	x.cacheRes = cacheMiss
	if bypass {
		x.cacheRes = cacheBypass
	}
	if g.servedStale(x, f, xmlKey, jsonKey) {
		return
	}
	x.core = f.core
	if f.err != nil {
		g.upstreamFailed(x, f.err)
		return
	}
	g.coreAnswered(x, f.entry.Status)
	e := f.entry
	if x.json {
		if e = g.fetchedJSON(x, f, jsonKey); e == nil {
			return
		}
	}
	g.writeRead(x, e)
	g.cacheHeaders(x, 0)
}

// servedStale answers with the entry still within stale_if_error when the core failed (no answer, or 5xx),
// and reports whether it did.
func (g *Gateway) servedStale(x *exchange, f *fetched, xmlKey func() string, jsonKey string) bool {
	if f.err == nil && f.entry.Status < 500 {
		return false
	}
	span := g.startSpan(x, "gateway.cache", trace.SpanKindInternal)
	l, ok := g.lookup(x, xmlKey, jsonKey)
	x.endSpan(span)
	if !ok {
		return false
	}
	g.cache.CountStale()
	g.log.Warn("upstream failed; serving a stale entry", "request_id", x.logID(), "age", l.Age.String())
	x.cacheRes = cacheStale
	g.writeRead(x, l.Entry)
	g.cacheHeaders(x, l.Age)
	return true
}

// fetchedJSON is the JSON form of a fetched entry, stored under jsonKey when its XML form was stored. It answers
// 502 and returns nil when the core's body is not translatable XML.
func (g *Gateway) fetchedJSON(x *exchange, f *fetched, jsonKey string) *cache.Entry {
	je, err := g.translateEntry(x, f.entry)
	if err != nil {
		g.log.Warn("upstream body is not translatable XML", "request_id", x.logID(), "err", err)
		g.respondError(x, fasthttp.StatusBadGateway, "The upstream response cannot be translated to JSON.")
		return nil
	}
	if f.stored {
		prepareEntry(je)
		_ = g.cache.Set(strings.Clone(jsonKey), je)
	}
	return je
}

// lookup finds the entry of the caller's representation: for JSON, its own entry, else the XML entry
// translated (and stored as JSON, so the next JSON hit costs nothing).
func (g *Gateway) lookup(x *exchange, xmlKey func() string, jsonKey string) (cache.Lookup, bool) {
	if !x.json {
		return g.cache.GetAt(xmlKey(), x.now, x.conn.stripeOf())
	}
	if l, ok := g.cache.GetAt(jsonKey, x.now, x.conn.stripeOf()); ok {
		return l, true
	}
	l, ok := g.cache.GetAt(xmlKey(), x.now, x.conn.stripeOf())
	if !ok {
		return l, false
	}
	je, err := g.translateEntry(x, l.Entry)
	if err != nil {
		return cache.Lookup{}, false
	}
	prepareEntry(je)
	_ = g.cache.Set(strings.Clone(jsonKey), je)
	l.Entry = je
	return l, true
}

// cacheKey appends the cache key of x's read in representation repr to buf and returns it as a string over
// those bytes: valid for lookups while the request lasts, to be copied when stored.
func (g *Gateway) cacheKey(x *exchange, buf []byte, repr string) string {
	scopeUser := ""
	if g.scopeUser {
		scopeUser = x.cred.user
	}
	b := g.cache.AppendKey(buf, readScope(&x.rt), x.rt.APIKey, scopeUser, x.rt.Version, x.rt.Path, x.rt.Query, repr)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// fetch sends the caller's request upstream and copies the answer, storing it under key when allowed.
func (g *Gateway) fetch(x *exchange, key string) *fetched {
	slot, err := g.enter(x)
	if err != nil {
		return &fetched{err: err}
	}
	defer g.leave(&slot)
	req := &x.ctx.Request
	g.prepare(x, req)
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	took, err := g.roundTripAsGet(x, req, resp)
	if err != nil {
		return &fetched{err: err, took: took, core: coreOf(resp)}
	}
	e, storable, personal := entryOf(resp)
	if storable {
		prepareEntry(e)
		_ = g.cache.Set(key, e) // a dropped Set is a later miss, never an error
	}
	return &fetched{entry: e, stored: storable, personal: personal, took: took, core: coreOf(resp)}
}

// skipStored are response headers never copied into an entry: per-connection or per-request ones.
var skipStored = map[string]bool{
	"Content-Length": true, "Date": true, "Connection": true, "Keep-Alive": true, "Transfer-Encoding": true,
	"Trailer": true, "Upgrade": true, "Proxy-Authenticate": true, "Te": true, "Proxy-Connection": true,
	"X-Request-Id": true, "X-Cache": true, "Age": true, wire.AuthProofHeader: true,
}

// entryOf copies an upstream response (fasthttp reuses its buffers) and says whether it may be stored (a
// 200 without Set-Cookie whose Cache-Control allows shared storage) and whether it is personal (private or
// with Set-Cookie: never shared with another caller, not even within a single flight).
func entryOf(resp *fasthttp.Response) (e *cache.Entry, storable, personal bool) {
	stripHop(&resp.Header)
	body := resp.Body()
	e = &cache.Entry{Status: resp.StatusCode(), Body: append(make([]byte, 0, len(body)), body...)}
	storable = e.Status == fasthttp.StatusOK
	for k, v := range resp.Header.All() {
		ks := string(k)
		if skipStored[ks] {
			continue
		}
		switch ks {
		case "Set-Cookie":
			storable, personal = false, true
		case "Cache-Control":
			if containsToken(v, "private") {
				storable, personal = false, true
			}
			if containsToken(v, "no-store") || containsToken(v, "no-cache") {
				storable = false
			}
		case "Vary":
			if bytes.Contains(v, []byte("*")) {
				storable = false
			}
		}
		e.Header = append(e.Header, cache.Header{Key: ks, Value: string(v)})
	}
	return e, storable, personal
}

// writeEntry writes a stored (immutable) entry as the response without copying its body.
func writeEntry(ctx *fasthttp.RequestCtx, e *cache.Entry) {
	ctx.SetStatusCode(e.Status)
	h := &ctx.Response.Header
	for _, kv := range e.Header {
		if kv.Key == "Content-Type" {
			h.SetContentType(kv.Value)
			continue
		}
		h.Add(kv.Key, kv.Value)
	}
	ctx.Response.SetBodyRaw(e.Body)
}

// noCache reports whether the caller asked to revalidate, given its Cache-Control and Pragma headers
// (Cache-Control: no-cache, max-age=0 or no-store, or Pragma: no-cache).
func noCache(cacheControl, pragma []byte) bool {
	if len(cacheControl) > 0 && (containsToken(cacheControl, "no-cache") ||
		containsToken(cacheControl, "max-age=0") || containsToken(cacheControl, "no-store")) {
		return true
	}
	return containsToken(pragma, "no-cache")
}

// comma separates the items of a list-valued header (RFC 9110 §5.6.1).
var comma = []byte(",")

// containsToken reports whether the comma-separated list v holds tok (case-insensitive).
func containsToken(v []byte, tok string) bool {
	for part := range bytes.SplitSeq(v, comma) {
		part = bytes.TrimSpace(part)
		if i := bytes.IndexByte(part, '='); i >= 0 && !bytes.ContainsRune([]byte(tok), '=') {
			part = part[:i]
		}
		if bytes.EqualFold(part, []byte(tok)) {
			return true
		}
	}
	return false
}

// X-Cache values.
const (
	cacheHit    = "HIT"
	cacheMiss   = "MISS"
	cacheStale  = "STALE"
	cacheBypass = "BYPASS"
)

// cacheHeaders sets X-Cache and Age on a cacheable read.
func (g *Gateway) cacheHeaders(x *exchange, age time.Duration) {
	if x.cacheRes == "" {
		return
	}
	// SetCanonical with names already canonical: Set would normalise them again.
	h := &x.ctx.Response.Header
	h.SetCanonical(headerXCache, cacheValue(x.cacheRes))
	setAge(h, age)
}

// setAge sets Age, in whole seconds.
func setAge(h *fasthttp.ResponseHeader, age time.Duration) {
	var buf [20]byte
	h.SetCanonical(headerAge, strconv.AppendInt(buf[:0], max(int64(age/time.Second), 0), 10))
}

var (
	headerXCache = []byte("X-Cache")
	headerAge    = []byte("Age")
	valueHit     = []byte(cacheHit)
	valueMiss    = []byte(cacheMiss)
	valueStale   = []byte(cacheStale)
	valueBypass  = []byte(cacheBypass)
)

func cacheValue(res string) []byte {
	switch res {
	case cacheHit:
		return valueHit
	case cacheStale:
		return valueStale
	case cacheBypass:
		return valueBypass
	}
	return valueMiss
}
