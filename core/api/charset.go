package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// Record write bodies are XML, and XML may come in any encoding its declaration or a byte-order mark names.
// The core reads UTF-8 and UTF-16, which every XML reader must, and the Latin single-byte encodings that
// older clients commonly declare; anything else is refused with a message that names the encoding, rather
// than as XML that is not well formed.

// encodings are the encodings a write body may use besides UTF-8 (and US-ASCII, a subset of it), by their
// lower-case IANA names and common aliases.
var encodings = map[string]encoding.Encoding{
	"iso-8859-1": charmap.ISO8859_1, "iso8859-1": charmap.ISO8859_1, "iso_8859-1": charmap.ISO8859_1,
	"latin1": charmap.ISO8859_1, "latin-1": charmap.ISO8859_1, "l1": charmap.ISO8859_1,
	"cp819": charmap.ISO8859_1, "ibm819": charmap.ISO8859_1, "csisolatin1": charmap.ISO8859_1,
	"iso-8859-15": charmap.ISO8859_15, "iso8859-15": charmap.ISO8859_15, "iso_8859-15": charmap.ISO8859_15,
	"latin-9": charmap.ISO8859_15, "latin9": charmap.ISO8859_15,
	"windows-1252": charmap.Windows1252, "cp1252": charmap.Windows1252, "x-cp1252": charmap.Windows1252,
	"utf-16":   unicode.UTF16(unicode.BigEndian, unicode.UseBOM),
	"utf-16be": unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
	"utf-16le": unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM),
}

// supportedEncodings is what the refusal of another encoding suggests instead.
const supportedEncodings = "UTF-8, UTF-16, ISO-8859-1, ISO-8859-15 or windows-1252"

// isUTF8 reports whether label names UTF-8 or US-ASCII, which need no conversion.
func isUTF8(label string) bool {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return true
	}
	return false
}

// unsupportedEncoding is the 415 of a body in an encoding the core does not read.
func unsupportedEncoding(label string) *httpError {
	return &httpError{http.StatusUnsupportedMediaType, "The encoding " + clip(label) +
		" is not supported; send the record in " + supportedEncodings + "."}
}

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16BE = []byte{0xFE, 0xFF}
	bomUTF16LE = []byte{0xFF, 0xFE}
)

// toUTF8 returns a write body as UTF-8 when its encoding is settled before the XML declaration is read: by a
// byte-order mark (which XML puts above the declaration), else by the charset parameter of its Content-Type
// (which RFC 7303 puts above the declaration too). settled reports that; otherwise the body is returned as it
// is and the declaration decides (xmlCharsetReader).
func toUTF8(data []byte, charset string) (out []byte, settled bool, err error) {
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		return data[len(bomUTF8):], true, nil
	case bytes.HasPrefix(data, bomUTF16BE), bytes.HasPrefix(data, bomUTF16LE):
		return decodeAll(unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), data)
	case charset == "":
		return data, false, nil
	case isUTF8(charset):
		// Settled as much as any other charset: a declaration that names another encoding no longer applies.
		return data, true, nil
	}
	enc, ok := encodings[strings.ToLower(strings.TrimSpace(charset))]
	if !ok {
		return nil, false, unsupportedEncoding(charset)
	}
	return decodeAll(enc, data)
}

// decodeAll converts data from enc to UTF-8; bytes that do not decode are the 415 of XML that is not well
// formed.
func decodeAll(enc encoding.Encoding, data []byte) ([]byte, bool, error) {
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return nil, false, notWellFormed("the body does not decode in its encoding")
	}
	return out, true, nil
}

// xmlCharsetReader is the xml.Decoder's CharsetReader for an encoding the XML declaration names.
func xmlCharsetReader(label string, in io.Reader) (io.Reader, error) {
	if isUTF8(label) {
		return in, nil
	}
	name := strings.ToLower(strings.TrimSpace(label))
	if strings.HasPrefix(name, "utf-16") {
		// The declaration was read as ASCII, so the body is not UTF-16 with a byte-order mark (toUTF8 would
		// have converted it) and cannot be UTF-16 without one either.
		return nil, &encodingError{&httpError{http.StatusUnsupportedMediaType,
			"The XML declares the encoding " + clip(label) + " but is not UTF-16 with a byte-order mark."}}
	}
	enc, ok := encodings[name]
	if !ok {
		return nil, &encodingError{unsupportedEncoding(label)}
	}
	return enc.NewDecoder().Reader(in), nil
}

// keepUTF8 is the CharsetReader of a body already converted to UTF-8: its declaration no longer applies.
func keepUTF8(_ string, in io.Reader) (io.Reader, error) { return in, nil }

// encodingError carries xmlCharsetReader's refusal through the xml.Decoder, which wraps it.
type encodingError struct{ refusal error }

func (e *encodingError) Error() string { return e.refusal.Error() }

// encodingRefusal returns the 415 of a declared encoding the core does not read, if err holds one.
func encodingRefusal(err error) (error, bool) {
	if ee, ok := errors.AsType[*encodingError](err); ok {
		return ee.refusal, true
	}
	return nil, false
}
