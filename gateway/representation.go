package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/internal/wire"
)

// HTTP caching and compression towards clients. A cached read carries an entity tag (ETag) and Cache-Control:
// private, no-cache: browsers and shared caches keep it only for the caller that read it, and revalidate it
// with If-None-Match, which the gateway answers 304 from its cache after verifying the credential, like any
// hit. A caller that accepts gzip or brotli gets the body compressed; each entry is compressed once, when it
// is stored, and every hit serves those bytes.
//
// A record read's tag comes from the core (a strong tag of its XML body): the XML representation carries it
// as it is, and the gateway's own representations add a suffix, "-json" for JSON and "-gzip" or "-br" for a
// compressed body ("<tag>-json-gzip"), so every representation has a tag of its own and any of them, sent back
// in If-Match on a write, names the core's tag, to which coreIfMatch maps it before forwarding: the core
// decides the condition inside its write transaction, whichever gateway the read came from. Other reads
// have no core tag: theirs is a hash of the body.

// minCompress is the smallest body worth compressing; a compressed form is kept only when it saves a tenth.
const minCompress = 512

const cacheControlRead = "private, no-cache"

// Suffixes of the gateway's representations of a core tag (see above).
const (
	suffixJSON   = "-json"
	suffixGzip   = "-gzip"
	suffixBrotli = "-br"
)

// prepareEntry makes the representations of an entry about to be stored: its tag and compressed forms.
func prepareEntry(e *cache.Entry) {
	base := headerValue(e, "ETag")
	if !wire.StrongETag(base) {
		sum := sha256.Sum256(e.Body)
		base = `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
	}
	e.ETag = base
	if len(e.Body) < minCompress {
		return
	}
	if gz := fasthttp.AppendGzipBytesLevel(nil, e.Body, fasthttp.CompressBestSpeed); len(gz) < len(e.Body)*9/10 {
		e.Gzip, e.GzipETag = gz, withSuffix(base, suffixGzip)
	}
	if br := fasthttp.AppendBrotliBytesLevel(nil, e.Body, fasthttp.CompressBrotliDefaultCompression); len(br) < len(e.Body)*9/10 {
		e.Brotli, e.BrotliETag = br, withSuffix(base, suffixBrotli)
	}
}

// headerValue is the first value of header key stored in e, or "".
func headerValue(e *cache.Entry, key string) string {
	for _, h := range e.Header {
		if strings.EqualFold(h.Key, key) {
			return h.Value
		}
	}
	return ""
}

// withSuffix is the strong tag t with suffix added inside its quotes; a weak or malformed tag is returned as
// it is, since it names no representation the gateway makes.
func withSuffix(t, suffix string) string {
	if !wire.StrongETag(t) {
		return t
	}
	return t[:len(t)-1] + suffix + `"`
}

// coreIfMatch rewrites If-Match for the core: each tag of a representation the gateway made from a core tag
// (JSON, compressed) becomes that core tag; "*", weak tags and other tags go on as they are.
func coreIfMatch(h *fasthttp.RequestHeader) {
	values := h.PeekAll("If-Match")
	if len(values) == 0 {
		return
	}
	var out []byte
	for _, v := range values {
		for item := range bytes.SplitSeq(v, comma) {
			item = bytes.TrimSpace(item)
			if len(item) == 0 {
				continue
			}
			if len(out) > 0 {
				out = append(out, ", "...)
			}
			out = append(out, coreTag(item)...)
		}
	}
	h.Del("If-Match")
	if len(out) == 0 {
		// An empty If-Match is the core's to refuse: it is sent on as it came.
		h.Set("If-Match", "")
		return
	}
	h.SetBytesV("If-Match", out)
}

// coreTag is the core tag a representation's tag t was made from, or t when it was made from none.
func coreTag(t []byte) []byte {
	if !wire.StrongETag(string(t)) {
		return t
	}
	inner := t[1 : len(t)-1]
	i := bytes.IndexByte(inner, '-')
	if i <= 0 {
		return t
	}
	switch string(inner[i:]) {
	case suffixJSON, suffixGzip, suffixBrotli, suffixJSON + suffixGzip, suffixJSON + suffixBrotli:
		return append(append([]byte{'"'}, inner[:i]...), '"')
	}
	return t
}

// Encodings a caller accepts (Accept-Encoding).
const (
	acceptGzip = 1 << iota
	acceptBrotli
	preferGzip // gzip has the higher q-value: served before brotli when both are at hand
)

// acceptedEncodings reads Accept-Encoding: the codings named with a q-value above 0 ("*" stands for those not
// named), and whether gzip is preferred (a higher q-value than brotli's; on a tie brotli, the smaller, wins).
func acceptedEncodings(v []byte) (enc int) {
	qGzip, qBr, qStar := -1, -1, -1 // thousandths; -1: not named
	for item := range bytes.SplitSeq(v, comma) {
		name, params, _ := bytes.Cut(item, []byte(";"))
		name = bytes.TrimSpace(name)
		q := 1000
		if p, ok := bytes.CutPrefix(bytes.TrimSpace(params), []byte("q=")); ok {
			q = qValue(bytes.TrimSpace(p))
		}
		switch {
		case bytes.EqualFold(name, []byte("gzip")), bytes.EqualFold(name, []byte("x-gzip")):
			qGzip = max(qGzip, q)
		case bytes.EqualFold(name, []byte("br")):
			qBr = max(qBr, q)
		case bytes.Equal(name, []byte("*")):
			qStar = max(qStar, q)
		}
	}
	if qGzip < 0 {
		qGzip = qStar
	}
	if qBr < 0 {
		qBr = qStar
	}
	if qGzip > 0 {
		enc |= acceptGzip
	}
	if qBr > 0 {
		enc |= acceptBrotli
	}
	if qBr > 0 && qGzip > qBr {
		enc |= preferGzip
	}
	return enc
}

// qValue reads a q-value (RFC 9110 12.4.2: 0 to 1 with up to three decimals) in thousandths; anything else
// counts as 1, as an unreadable weight is best ignored rather than taken to refuse the coding.
func qValue(q []byte) int {
	if len(q) == 0 || len(q) > 5 || q[0] != '0' && q[0] != '1' || len(q) > 1 && q[1] != '.' {
		return 1000
	}
	n := int(q[0]-'0') * 1000
	scale := 100
	for _, c := range q[min(len(q), 2):] {
		if c < '0' || c > '9' {
			return 1000
		}
		n += int(c-'0') * scale
		scale /= 10
	}
	return min(n, 1000)
}

// matchesETag reports whether If-None-Match (a list of entity tags, or "*") names tag, by the weak comparison
// RFC 9110 prescribes for it.
func matchesETag(ifNoneMatch []byte, tag string) bool {
	if tag == "" {
		return false
	}
	for t := range bytes.SplitSeq(ifNoneMatch, comma) {
		t = bytes.TrimPrefix(bytes.TrimSpace(t), []byte("W/"))
		if string(t) == "*" || string(t) == tag {
			return true
		}
	}
	return false
}

var (
	// The name as fasthttp normalises it, which an entry's headers hold: setting it replaces the core's tag
	// that writeEntry wrote, rather than adding a second ETag.
	headerETag            = []byte("Etag")
	headerCacheControl    = []byte("Cache-Control")
	headerContentEncoding = []byte("Content-Encoding")
	valueCacheControlRead = []byte(cacheControlRead)
	valueGzip             = []byte("gzip")
	valueBrotli           = []byte("br")
)

// writeRead answers a cacheable read from entry e in the representation the caller accepts, or 304 when its
// If-None-Match names that representation. Entries without a tag (not stored) are written as they are.
func (g *Gateway) writeRead(x *exchange, e *cache.Entry) {
	if e.ETag == "" {
		writeEntry(x.ctx, e)
		return
	}
	writeForm(x.ctx, e, x.formOf(e))
}

// form is the representation of an entry a caller gets: the body, its entity tag and content coding (nil:
// none), and whether the caller's If-None-Match names that tag (304).
type form struct {
	body        []byte
	tag         string
	coding      []byte
	notModified bool
}

// formOf is the form of e (which has an ETag) that x's caller gets.
func (x *exchange) formOf(e *cache.Entry) form {
	f := form{body: e.Body, tag: e.ETag}
	switch {
	case x.accept&preferGzip != 0 && e.Gzip != nil:
		f.body, f.tag, f.coding = e.Gzip, e.GzipETag, valueGzip
	case x.accept&acceptBrotli != 0 && e.Brotli != nil:
		f.body, f.tag, f.coding = e.Brotli, e.BrotliETag, valueBrotli
	case x.accept&acceptGzip != 0 && e.Gzip != nil:
		f.body, f.tag, f.coding = e.Gzip, e.GzipETag, valueGzip
	}
	f.notModified = len(x.ifNoneMatch) > 0 && matchesETag(x.ifNoneMatch, f.tag)
	return f
}

// writeForm answers with form f of entry e: the entry's status and headers with f's body and coding, or 304.
func writeForm(ctx *fasthttp.RequestCtx, e *cache.Entry, f form) {
	h := &ctx.Response.Header
	if f.notModified {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
	} else {
		writeEntry(ctx, e)
		ctx.Response.SetBodyRaw(f.body)
		if f.coding != nil {
			h.SetCanonical(headerContentEncoding, f.coding)
		}
	}
	h.SetCanonical(headerETag, s2b(f.tag))
	h.SetCanonical(headerCacheControl, valueCacheControlRead)
}

// s2b is the bytes of s, for fasthttp setters that copy them.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
