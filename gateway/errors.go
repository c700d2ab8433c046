package gateway

import (
	"strings"

	"github.com/valyala/fasthttp"
)

// xmlEscaper escapes text for an XML element.
var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// errorXML is the error body of docs/api.md (Errors): <error><message>...</message></error>.
func errorXML(message string) []byte {
	return []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<error>\n  <message>" +
		xmlEscaper.Replace(message) + "</message>\n</error>\n")
}

// writeError answers with status and an XML error message, dropping whatever the response held.
func writeXMLError(ctx *fasthttp.RequestCtx, status int, message string) {
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	ctx.SetContentType(contentTypeXML)
	ctx.SetBody(errorXML(message))
}

const contentTypeXML = "application/xml; charset=utf-8"
