package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/cache"
)

// HTTP caching and compression towards clients. A cached read carries an entity tag (ETag) and Cache-Control:
// private, no-cache: browsers and shared caches keep it only for the caller that read it, and revalidate it
// with If-None-Match, which the gateway answers 304 from its cache after verifying the credential, like any
// hit. A caller that accepts gzip or brotli gets the body compressed; each entry is compressed once, when it
// is stored, and every hit serves those bytes.

// minCompress is the smallest body worth compressing; a compressed form is kept only when it saves a tenth.
const minCompress = 512

const cacheControlRead = "private, no-cache"

// prepareEntry makes the representations of an entry about to be stored: its tag and compressed forms.
func prepareEntry(e *cache.Entry) {
	sum := sha256.Sum256(e.Body)
	tag := base64.RawURLEncoding.EncodeToString(sum[:12])
	e.ETag = `"` + tag + `"`
	if len(e.Body) < minCompress {
		return
	}
	if gz := fasthttp.AppendGzipBytesLevel(nil, e.Body, fasthttp.CompressBestSpeed); len(gz) < len(e.Body)*9/10 {
		e.Gzip, e.GzipETag = gz, `"`+tag+`-gzip"`
	}
	if br := fasthttp.AppendBrotliBytesLevel(nil, e.Body, fasthttp.CompressBrotliDefaultCompression); len(br) < len(e.Body)*9/10 {
		e.Brotli, e.BrotliETag = br, `"`+tag+`-br"`
	}
}

// Encodings a caller accepts (Accept-Encoding).
const (
	acceptGzip = 1 << iota
	acceptBrotli
)

// acceptedEncodings reads Accept-Encoding: the codings named with a q-value above 0 ("*" names both).
func acceptedEncodings(v []byte) (enc int) {
	for item := range bytes.SplitSeq(v, comma) {
		name, params, _ := bytes.Cut(item, []byte(";"))
		name = bytes.TrimSpace(name)
		if q, ok := bytes.CutPrefix(bytes.TrimSpace(params), []byte("q=")); ok && zeroQ(bytes.TrimSpace(q)) {
			continue
		}
		switch {
		case bytes.EqualFold(name, []byte("gzip")), bytes.EqualFold(name, []byte("x-gzip")):
			enc |= acceptGzip
		case bytes.EqualFold(name, []byte("br")):
			enc |= acceptBrotli
		case bytes.Equal(name, []byte("*")):
			enc |= acceptGzip | acceptBrotli
		}
	}
	return enc
}

// zeroQ reports whether a q-value is 0 ("0", "0.", "0.000").
func zeroQ(q []byte) bool {
	if len(q) == 0 || q[0] != '0' {
		return false
	}
	for _, c := range q[1:] {
		if c != '.' && c != '0' {
			return false
		}
	}
	return true
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
	headerETag            = []byte("ETag")
	headerCacheControl    = []byte("Cache-Control")
	headerContentEncoding = []byte("Content-Encoding")
	valueCacheControlRead = []byte(cacheControlRead)
	valueGzip             = []byte("gzip")
	valueBrotli           = []byte("br")
)

// writeRead answers a cacheable read from entry e in the representation the caller accepts, or 304 when its
// If-None-Match names that representation. Entries without a tag (not stored) are written as they are.
func (g *Gateway) writeRead(x *exchange, e *cache.Entry) {
	ctx := x.ctx
	if e.ETag == "" {
		writeEntry(ctx, e)
		return
	}
	body, tag, coding := e.Body, e.ETag, []byte(nil)
	switch {
	case x.accept&acceptBrotli != 0 && e.Brotli != nil:
		body, tag, coding = e.Brotli, e.BrotliETag, valueBrotli
	case x.accept&acceptGzip != 0 && e.Gzip != nil:
		body, tag, coding = e.Gzip, e.GzipETag, valueGzip
	}
	h := &ctx.Response.Header
	if len(x.ifNoneMatch) > 0 && matchesETag(x.ifNoneMatch, tag) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
	} else {
		writeEntry(ctx, e)
		ctx.Response.SetBodyRaw(body)
		if coding != nil {
			h.SetCanonical(headerContentEncoding, coding)
		}
	}
	h.SetCanonical(headerETag, s2b(tag))
	h.SetCanonical(headerCacheControl, valueCacheControlRead)
}

// s2b is the bytes of s, for fasthttp setters that copy them.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
