package translate

import "bytes"

// Content types of the two representations.
const (
	ContentTypeJSON = "application/json; charset=utf-8"
	ContentTypeXML  = "application/xml; charset=utf-8"
)

// WantsJSON reports whether an Accept header asks for JSON: the best q-value of application/json or an
// application/*+json type must be above zero, above the best of the explicit XML types (application/xml,
// text/xml, application/*+xml) and at least that of the ranges (*/*, application/*, text/*). So a browser
// client's "application/json, text/plain, */*" gets JSON (a named type beats a range at equal q), while a
// tie between JSON and XML, a missing header and anything unparsable keep XML, the interface's own
// representation. Media types are case-insensitive.
func WantsJSON(accept []byte) bool {
	var qJSON, qXML, qRange int // q-values in thousandths
	for len(accept) > 0 {
		var part []byte
		part, accept, _ = bytes.Cut(accept, []byte{','})
		mt, q, ok := mediaRange(part)
		if !ok {
			continue
		}
		switch classify(mt) {
		case mediaJSON:
			qJSON = max(qJSON, q)
		case mediaXML:
			qXML = max(qXML, q)
		case mediaAny:
			qRange = max(qRange, q)
		}
	}
	return qJSON > 0 && qJSON > qXML && qJSON >= qRange
}

// IsJSON reports whether a Content-Type header names JSON (application/json or application/*+json, any
// parameters): a request body the gateway translates to XML before forwarding.
func IsJSON(contentType []byte) bool {
	mt := contentType
	if i := bytes.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	return classify(bytes.TrimSpace(mt)) == mediaJSON
}

// ErrorJSON is the JSON form of the interface's error body, {"error":{"message":...}}: what XMLToJSON makes
// of <error><message>...</message></error>. Invalid UTF-8 in message becomes U+FFFD.
func ErrorJSON(message string) []byte {
	b := make([]byte, 0, len(message)+32)
	b = append(b, `{"error":{"message":"`...)
	b = appendJSONStringBody(b, bytes.ToValidUTF8([]byte(message), []byte("\uFFFD")))
	return append(b, `"}}`...)
}

type mediaClass uint8

const (
	mediaOther mediaClass = iota
	mediaJSON
	mediaXML
	mediaAny // a range covering both representations: */*, application/*, text/*
)

// classify sorts a media type (type/subtype, no parameters) into JSON, XML, a range covering both, or
// other.
func classify(mt []byte) mediaClass {
	slash := bytes.IndexByte(mt, '/')
	if slash < 0 {
		return mediaOther
	}
	typ, sub := mt[:slash], mt[slash+1:]
	switch {
	case bytes.EqualFold(typ, []byte("application")):
		switch {
		case bytes.EqualFold(sub, []byte("json")):
			return mediaJSON
		case bytes.EqualFold(sub, []byte("xml")):
			return mediaXML
		case string(sub) == "*":
			return mediaAny
		case len(sub) > 5 && bytes.EqualFold(sub[len(sub)-5:], []byte("+json")):
			return mediaJSON
		case len(sub) > 4 && bytes.EqualFold(sub[len(sub)-4:], []byte("+xml")):
			return mediaXML
		}
	case bytes.EqualFold(typ, []byte("text")):
		if bytes.EqualFold(sub, []byte("xml")) {
			return mediaXML
		}
		if string(sub) == "*" {
			return mediaAny
		}
	case string(typ) == "*" && string(sub) == "*":
		return mediaAny
	}
	return mediaOther
}

// mediaRange splits one element of an Accept header into its media type and q-value (thousandths,
// default 1000). ok is false for an empty element or a malformed q.
func mediaRange(part []byte) (mt []byte, q int, ok bool) {
	params := []byte(nil)
	if i := bytes.IndexByte(part, ';'); i >= 0 {
		part, params = part[:i], part[i+1:]
	}
	mt = bytes.TrimSpace(part)
	if len(mt) == 0 {
		return nil, 0, false
	}
	q = 1000
	for len(params) > 0 {
		var p []byte
		p, params, _ = bytes.Cut(params, []byte{';'})
		name, value, found := bytes.Cut(bytes.TrimSpace(p), []byte("="))
		if !found || !bytes.EqualFold(bytes.TrimSpace(name), []byte("q")) {
			continue
		}
		v, ok := parseQ(bytes.TrimSpace(value))
		if !ok {
			return nil, 0, false
		}
		q = v
	}
	return mt, q, true
}

// parseQ reads a qvalue (RFC 9110: "0" to "1" with up to three decimals) in thousandths.
func parseQ(b []byte) (int, bool) {
	if len(b) == 0 || (b[0] != '0' && b[0] != '1') {
		return 0, false
	}
	q := int(b[0]-'0') * 1000
	if len(b) == 1 {
		return q, true
	}
	if b[1] != '.' || len(b) > 5 {
		return 0, false
	}
	scale := 100
	for _, c := range b[2:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		q += int(c-'0') * scale
		scale /= 10
	}
	if q > 1000 {
		return 0, false
	}
	return q, true
}
