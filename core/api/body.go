package api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/reqgate/reqgate/core"
)

// Limits of a record write body, besides its size in bytes (Options.MaxBodyBytes).
const (
	maxBodyFields = 1000 // <field> elements
	maxBodyDepth  = 16   // element nesting
	maxNameLen    = 64   // length of a <name>
	maxValueIDs   = 1000 // nested <value id=".."> elements of one multi-picklist value
)

// bodyField is one <field> of a record write body.
type bodyField struct {
	Name string
	// Value is the text of <value>.
	Value string
	// IDs holds the id attributes of nested <value id=".."> elements, or of <value id=".."> itself, so that
	// a client may send back a picklist value in the shape a read gave it. Picklist fields use IDs when
	// present; other fields ignore them.
	IDs []string
}

// readBody reads a request body of at most max bytes: 413 when Content-Length announces more (before
// reading anything) or when a chunked body turns out longer.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, errBodyTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, errBodyTooLarge
		}
		return nil, &httpError{http.StatusBadRequest, "The request body could not be read."}
	}
	return body, nil
}

// checkContentType accepts the Content-Type of a record write and returns its charset parameter, if any: an XML media type (application/xml, text/xml,
// application/*+xml, with any parameters), or none at all. Anything else is 415. JSON is translated to XML by
// the gateway and never reaches the core as JSON, so the core has no other type to accept. A request without
// a Content-Type is read as XML because clients of the mirrored service that never set one (bare HTTP
// libraries send none) have always been served; the body must still be well-formed XML.
func checkContentType(header string) (charset string, err error) {
	if strings.TrimSpace(header) == "" {
		return "", nil
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil {
		return "", &httpError{http.StatusUnsupportedMediaType,
			"The Content-Type " + strconv.Quote(clip(header)) + " cannot be read; send the record as application/xml."}
	}
	if mt == "application/xml" || mt == "text/xml" ||
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+xml") {
		return params["charset"], nil
	}
	return "", &httpError{http.StatusUnsupportedMediaType,
		"The Content-Type " + clip(mt) + " is not supported; send the record as application/xml."}
}

// parseRecordBody parses <root><fields><field><name>..</name><value>..</value></field>..</fields></root>.
// charset is the charset parameter of the body's Content-Type, if any (see toUTF8). XML that is not well
// formed, or in an encoding the core does not read, is a 415 error; a well-formed body of the wrong shape (another root
// element, unknown elements, text where elements belong, a DTD) is a *core.ValidationError (400).
// The children of <field> a record read has besides <name> and <value> (label, sort, ...) are ignored, any
// other is refused (see field).
func parseRecordBody(data []byte, root, charset string) ([]bodyField, error) {
	data, settled, err := toUTF8(data, charset)
	if err != nil {
		return nil, err
	}
	p := bodyParser{d: xml.NewDecoder(bytes.NewReader(data))}
	p.d.Strict = true
	p.d.Entity = nil // only the five predefined entities
	p.d.CharsetReader = xmlCharsetReader
	if settled {
		p.d.CharsetReader = keepUTF8
	}
	start, err := p.rootStart()
	if err != nil {
		return nil, err
	}
	if start.Name.Local != root {
		return nil, core.Invalid("", "the root element must be <"+root+">, not <"+clip(start.Name.Local)+">")
	}
	var fields []bodyField
	err = p.children(start.Name.Local, func(el xml.StartElement) error {
		if el.Name.Local != "fields" {
			return core.Invalid("", "unexpected element <"+clip(el.Name.Local)+"> in <"+root+">")
		}
		return p.children("fields", func(el xml.StartElement) error {
			if el.Name.Local != "field" {
				return core.Invalid("", "unexpected element <"+clip(el.Name.Local)+"> in <fields>")
			}
			if len(fields) >= maxBodyFields {
				return core.Invalid("", "too many fields")
			}
			f, err := p.field()
			if err != nil {
				return err
			}
			fields = append(fields, f)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return fields, nil
}

// bodyParser walks the tokens of a write body.
type bodyParser struct {
	d     *xml.Decoder
	depth int
}

// token returns the next token; a syntax error (or the end of input) is the 415 error.
func (p *bodyParser) token() (xml.Token, error) {
	t, err := p.d.Token()
	if err == io.EOF {
		return nil, notWellFormed("unexpected end of the document")
	}
	if err != nil {
		return nil, decodeError(err)
	}
	return t, nil
}

// decodeError is the 415 of an error of the XML decoder: an encoding the core does not read, or the
// decoder's own account of what is not well formed, without its package prefixes.
func decodeError(err error) error {
	if refusal, ok := encodingRefusal(err); ok {
		return refusal
	}
	msg := strings.TrimPrefix(err.Error(), "XML syntax error on ")
	return notWellFormed(clip(strings.TrimPrefix(msg, "xml: ")))
}

// rootStart skips the prolog (declaration, comments, whitespace) and returns the root start element.
func (p *bodyParser) rootStart() (xml.StartElement, error) {
	for {
		t, err := p.d.Token()
		if err == io.EOF {
			return xml.StartElement{}, notWellFormed("the body holds no root element")
		}
		if err != nil {
			return xml.StartElement{}, decodeError(err)
		}
		switch t := t.(type) {
		case xml.StartElement:
			p.depth = 1
			return t, nil
		case xml.CharData:
			if !isSpace(t) {
				return xml.StartElement{}, notWellFormed("text before the root element")
			}
		case xml.Directive:
			return xml.StartElement{}, core.Invalid("", "document type declarations are not accepted")
		}
	}
}

// end checks that nothing but comments and whitespace follows the root element.
func (p *bodyParser) end() error {
	for {
		t, err := p.d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return decodeError(err)
		}
		switch t := t.(type) {
		case xml.StartElement:
			return notWellFormed("more than one root element")
		case xml.CharData:
			if !isSpace(t) {
				return notWellFormed("text after the root element")
			}
		case xml.Directive:
			return core.Invalid("", "document type declarations are not accepted")
		}
	}
}

// children calls each for every child element of the element just opened (named parent) until its end
// tag; text other than whitespace is refused. each must consume the child through its end tag.
func (p *bodyParser) children(parent string, each func(xml.StartElement) error) error {
	for {
		t, err := p.token()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.StartElement:
			if err := p.enter(); err != nil {
				return err
			}
			if err := each(t); err != nil {
				return err
			}
		case xml.EndElement:
			p.depth--
			return nil
		case xml.CharData:
			if !isSpace(t) {
				return core.Invalid("", "unexpected text in <"+parent+">")
			}
		case xml.Directive:
			return core.Invalid("", "document type declarations are not accepted")
		}
	}
}

func (p *bodyParser) enter() error {
	p.depth++
	if p.depth > maxBodyDepth {
		return core.Invalid("", "elements nested too deeply")
	}
	return nil
}

// readChildren are the children of <field> in a record read besides <name> and <value>: a read sent back
// as a write (read, modify, write) carries them, and they are ignored. Any other child is refused, so that a
// misspelt <vaule> is not taken for a field sent without a value.
var readChildren = map[string]bool{"label": true, "sort": true, "prefix": true, "value_plaintext": true, "list_type": true}

// field reads the children of one <field>: one <name>, one <value>, and the children of a read that are
// ignored (readChildren). A second <value> is refused rather than merged or left to overwrite the first:
// which of two values a write meant is not for the core to guess; a <field> without <value> is refused too
// (an empty <value /> clears a field).
func (p *bodyParser) field() (bodyField, error) {
	var f bodyField
	var haveName bool
	values := 0
	err := p.children("field", func(el xml.StartElement) error {
		switch el.Name.Local {
		case "name":
			s, err := p.text("name")
			if err != nil {
				return err
			}
			if haveName {
				return core.Invalid("", "a <field> has more than one <name>")
			}
			haveName = true
			f.Name = strings.TrimSpace(s)
			if len(f.Name) > maxNameLen {
				return core.Invalid("", "field name too long: "+clip(f.Name))
			}
			return nil
		case "value":
			values++
			return p.value(el, &f)
		}
		if !readChildren[el.Name.Local] {
			return core.Invalid(clip(f.Name), "unexpected element <"+clip(el.Name.Local)+"> in <field> (a field takes <name> and <value>)")
		}
		return p.skip()
	})
	if err != nil {
		return f, err
	}
	if f.Name == "" {
		return f, core.Invalid("", "a <field> has no <name>")
	}
	if values > 1 {
		return f, core.Invalid(clip(f.Name), "sent with more than one <value>")
	}
	if values == 0 {
		return f, core.Invalid(clip(f.Name), "sent without a <value> (an empty <value /> clears a field)")
	}
	return f, nil
}

// value reads <value>: its text, or the id attributes of nested <value id=".."> children. Text beside nested
// values is refused (it would be dropped), and so is an id on a <value> that has nested ones: a read gives
// either <value id="3">Label</value> or <value><value id="1">..</value>..</value>, never both.
func (p *bodyParser) value(el xml.StartElement, f *bodyField) error {
	id, hasID := attr(el, "id")
	if hasID {
		f.IDs = append(f.IDs, id)
	}
	var text strings.Builder
	nested := false
	for {
		t, err := p.token()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.CharData:
			text.Write(t)
		case xml.StartElement:
			if err := p.enter(); err != nil {
				return err
			}
			if t.Name.Local != "value" {
				return core.Invalid(f.Name, "unexpected element <"+clip(t.Name.Local)+
					"> in <value> (send HTML escaped or in a CDATA section)")
			}
			if hasID {
				return core.Invalid(f.Name, "a <value id=\"..\"> holds no nested <value>s")
			}
			nested = true
			id, ok := attr(t, "id")
			inner, err := p.text("value")
			if err != nil {
				return err
			}
			if !ok {
				id = strings.TrimSpace(inner)
			}
			if len(f.IDs) >= maxValueIDs {
				return core.Invalid(f.Name, "too many values")
			}
			f.IDs = append(f.IDs, id)
		case xml.EndElement:
			p.depth--
			if nested && strings.TrimSpace(text.String()) != "" {
				return core.Invalid(f.Name, "text beside nested <value>s (send either the text or one <value> per choice)")
			}
			f.Value = text.String()
			return nil
		case xml.Directive:
			return core.Invalid("", "document type declarations are not accepted")
		}
	}
}

// text reads the character data of a leaf element through its end tag.
func (p *bodyParser) text(name string) (string, error) {
	var b strings.Builder
	for {
		t, err := p.token()
		if err != nil {
			return "", err
		}
		switch t := t.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			return "", core.Invalid("", "unexpected element <"+clip(t.Name.Local)+"> in <"+name+">")
		case xml.EndElement:
			p.depth--
			return b.String(), nil
		}
	}
}

// skip consumes an ignored element through its end tag.
func (p *bodyParser) skip() error {
	for level := 1; level > 0; {
		t, err := p.token()
		if err != nil {
			return err
		}
		switch t.(type) {
		case xml.StartElement:
			if err := p.enter(); err != nil {
				return err
			}
			level++
		case xml.EndElement:
			p.depth--
			level--
		case xml.Directive:
			return core.Invalid("", "document type declarations are not accepted")
		}
	}
	return nil
}

func attr(el xml.StartElement, name string) (string, bool) {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return strings.TrimSpace(a.Value), true
		}
	}
	return "", false
}

func isSpace(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// clip shortens text quoted back to the caller.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
