package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/xmlesc"
	"github.com/reqgate/reqgate/translate"
)

// respondError answers with status and an error body in the caller's representation.
func (g *Gateway) respondError(x *exchange, status int, message string) {
	if !x.json {
		writeXMLError(x.ctx, status, message)
		return
	}
	ctx := x.ctx
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	ctx.SetContentType(translate.ContentTypeJSON)
	ctx.SetBody(translate.ErrorJSON(message))
}

// errorXML is the error body of docs/api.md (Errors): <error><message>...</message></error>, written byte
// for byte as the core writes its own (same layout, same escaping by package xmlesc), so that a caller
// cannot tell which of the two answered.
func errorXML(message string) []byte {
	const head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<error>\n"
	b := make([]byte, 0, len(head)+len(message)+40)
	b = append(b, head...)
	if message == "" {
		b = append(b, "<message />\n"...)
	} else {
		b = append(b, "<message>"...)
		b = xmlesc.Append(b, message, false)
		b = append(b, "</message>\n"...)
	}
	return append(b, "</error>\n"...)
}

// writeXMLError answers with status and an XML error message, dropping whatever the response held.
func writeXMLError(ctx *fasthttp.RequestCtx, status int, message string) {
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	ctx.SetContentType(contentTypeXML)
	ctx.SetBody(errorXML(message))
}

const contentTypeXML = "application/xml; charset=utf-8"
