package gateway

import (
	"bytes"
	"errors"
	"strings"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/translate"
)

// JSON negotiation: a caller whose Accept prefers application/json gets every body of the interface in its
// JSON form (package translate), errors included; a request body sent as JSON is translated to XML before it
// reaches the core. The cache keeps the JSON form of a read as its own entry, so a cached JSON read costs no
// translation; a JSON read whose XML form is cached is translated once and stored.

// translateRequest turns a JSON request body into XML in place. It returns false after answering 400, an
// empty body included: it is malformed JSON like any other.
func (g *Gateway) translateRequest(x *exchange) bool {
	req := &x.ctx.Request
	if !translate.IsJSON(req.Header.ContentType()) {
		return true
	}
	defer x.endSpan(g.startSpan(x, "gateway.translate", trace.SpanKindInternal))
	xml, err := translate.JSONToXML(req.Body())
	if err != nil {
		var se *translate.SyntaxError
		var st *translate.StructureError
		switch {
		case errors.As(err, &se), errors.As(err, &st):
			g.respondError(x, fasthttp.StatusBadRequest, err.Error())
		default:
			g.respondError(x, fasthttp.StatusBadRequest, "The JSON body cannot be translated to XML.")
		}
		return false
	}
	req.SetBodyRaw(xml)
	req.Header.SetContentType(translate.ContentTypeXML)
	return true
}

// translateResponse turns an XML response body into JSON in place, for a caller that asked for JSON.
func (g *Gateway) translateResponse(x *exchange) {
	resp := &x.ctx.Response
	if !x.json || len(resp.Body()) == 0 || !isXML(resp.Header.ContentType()) {
		return
	}
	defer x.endSpan(g.startSpan(x, "gateway.translate", trace.SpanKindInternal))
	js, err := translate.XMLToJSON(resp.Body())
	if err != nil {
		g.log.Warn("upstream body is not translatable XML", "request_id", x.logID(), "err", err)
		g.respondError(x, fasthttp.StatusBadGateway, "The upstream response cannot be translated to JSON.")
		return
	}
	resp.SetBodyRaw(js)
	resp.Header.SetContentType(translate.ContentTypeJSON)
	if tag := resp.Header.Peek("ETag"); len(tag) > 0 {
		resp.Header.Set("ETag", withSuffix(string(tag), suffixJSON))
	}
}

// translateEntry is jsonEntry for x's read, traced as a translation.
func (g *Gateway) translateEntry(x *exchange, e *cache.Entry) (*cache.Entry, error) {
	defer x.endSpan(g.startSpan(x, "gateway.translate", trace.SpanKindInternal))
	return jsonEntry(e)
}

// jsonEntry is the JSON form of an XML entry: same status, headers and stored time, translated body.
func jsonEntry(e *cache.Entry) (*cache.Entry, error) {
	out := &cache.Entry{Status: e.Status, Stored: e.Stored, Body: e.Body, Header: make([]cache.Header, 0, len(e.Header))}
	xml := false
	for _, h := range e.Header {
		if h.Key == "Content-Type" {
			if xml = isXML([]byte(h.Value)); xml {
				h.Value = translate.ContentTypeJSON
			}
		}
		out.Header = append(out.Header, h)
	}
	if !xml || len(e.Body) == 0 {
		return out, nil
	}
	// The JSON body is another representation: its tag is the XML one's with a suffix (representation.go).
	for i, h := range out.Header {
		if strings.EqualFold(h.Key, "ETag") {
			out.Header[i].Value = withSuffix(h.Value, suffixJSON)
		}
	}
	js, err := translate.XMLToJSON(e.Body)
	if err != nil {
		return nil, err
	}
	out.Body = js
	return out, nil
}

// isXML reports whether a Content-Type names XML (application/xml, text/xml, application/*+xml).
func isXML(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	return bytes.EqualFold(ct, []byte("application/xml")) || bytes.EqualFold(ct, []byte("text/xml")) ||
		len(ct) > 4 && bytes.EqualFold(ct[len(ct)-4:], []byte("+xml"))
}
