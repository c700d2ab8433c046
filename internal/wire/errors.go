package wire

import "github.com/reqgate/reqgate/internal/xmlesc"

// ContentTypeXML is the media type of every XML document of the interface, the error document included.
const ContentTypeXML = "application/xml; charset=utf-8"

// errorHead starts the error document: the XML declaration, then <error> on a line of its own, one element per
// line as in every document of the interface.
const errorHead = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<error>\n"

// AppendErrorXML appends to dst the error document of the interface (docs/api.md, Errors) with its message:
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<error>
//	<message>...</message>
//	</error>
//
// The core and the gateway both write their errors with it, byte for byte the same for the same message, so
// a caller cannot tell which of the two answered. The message is escaped by package xmlesc (a character XML
// cannot carry becomes U+FFFD); an empty one is written <message />.
func AppendErrorXML(dst []byte, message string) []byte {
	dst = append(dst, errorHead...)
	if message == "" {
		dst = append(dst, "<message />\n"...)
	} else {
		dst = append(dst, "<message>"...)
		dst = xmlesc.Append(dst, message, false)
		dst = append(dst, "</message>\n"...)
	}
	return append(dst, "</error>\n"...)
}

// ErrorXML is the error document with message, in a slice of its own.
func ErrorXML(message string) []byte {
	return AppendErrorXML(make([]byte, 0, len(errorHead)+len(message)+40), message)
}
