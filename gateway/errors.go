package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/wire"
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

// writeXMLError answers with status and the error document of the interface (wire.AppendErrorXML, the core's
// own, so that a caller cannot tell which of the two answered), dropping whatever the response held.
func writeXMLError(ctx *fasthttp.RequestCtx, status int, message string) {
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	ctx.SetContentType(wire.ContentTypeXML)
	ctx.SetBody(wire.ErrorXML(message))
}
