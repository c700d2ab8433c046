// Package openapi is the OpenAPI 3.1 document of the interface of docs/api.md, both faces: the XML
// interface (/api/{api_key}/... is version 1, /api2/{api_key}/... version 2) and the gateway's JSON face (the
// same paths with Accept: application/json and JSON request bodies, docs/json.md).
//
// The document is generated, so that it cannot drift from the code: the paths come from the interface's route
// table (internal/wire/route), which the gateway and the core route by, with what this package says of each
// route (routes.go), checked by a test against the real core behind a real gateway; the schemas of the
// resources come from translate's schema of the elements (translate.Describe), which drives the translation
// itself. The gateway serves it at /openapi.json; `reqgate openapi` prints it.
package openapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reqgate/reqgate/internal/wire/route"
)

// Title and version of the document's info object.
const (
	Title = "reqgate"
	// APIVersion is the version of the document's description; the API's own versions are its paths.
	APIVersion = "2"
)

var (
	once sync.Once
	doc  []byte
)

// JSON is the document, indented, with a final newline. It is built once; do not modify the slice.
func JSON() []byte {
	once.Do(func() {
		b, err := json.MarshalIndent(build(), "", "  ")
		if err != nil {
			panic("openapi: " + err.Error())
		}
		doc = append(b, '\n')
	})
	return doc
}

// build assembles the document.
func build() obj {
	d := o(
		"openapi", "3.1.0",
		"info", o(
			"title", Title,
			"version", APIVersion,
			"summary", "Requirements-management service: the XML REST interface and its JSON translation",
			"description", description,
		),
		"jsonSchemaDialect", "https://spec.openapis.org/oas/3.1/dialect/base",
		"servers", []any{o("url", "/", "description", "the gateway")},
		"security", []any{o("basic", []string{})},
		"tags", tags(),
		"paths", paths(),
		"components", components(),
	)
	return d
}

const description = `Every resource is XML (application/xml), and JSON (application/json) when the request's Accept header prefers it: ` +
	`the gateway translates, following docs/json.md. Request bodies may be sent as JSON with Content-Type: application/json. ` +
	"`/api/{api_key}` is API version 1, `/api2/{api_key}` version 2 (custom objects, views, related items, field history and search). " +
	"Every API request carries the credentials of a user of the account (HTTP Basic). " +
	"Reads are cached by the gateway (X-Cache, Age, ETag); rate limits answer 429 or 503 with Retry-After."

func tags() []any {
	var t []any
	t = append(t, o("name", "account", "description", "Objects, users and the throttle status"))
	for _, k := range Kinds {
		t = append(t, o("name", k.Root, "description", "Records of kind "+k.Segment))
	}
	t = append(t, o("name", "service", "description", "The gateway's own endpoints"))
	return t
}

func paths() obj {
	ps := obj{}
	for _, r := range Routes() {
		item, _ := ps.get(r.Template).(obj)
		if item == nil {
			item = obj{}
			var params []any
			for _, p := range pathParams(r.Template) {
				params = append(params, ref("parameters", p))
			}
			item.set("parameters", params)
		}
		item.set(strings.ToLower(r.Method), operation(r))
		ps.set(r.Template, item)
	}
	plain := func(id, summary, text string, statuses ...int) obj {
		rs := obj{}
		for _, s := range statuses {
			rs.set(strconv.Itoa(s), o("description", http.StatusText(s), "content", o("text/plain", o("schema", o("type", "string", "examples", []string{text})))))
		}
		return o("get", o("operationId", id, "tags", []string{"service"}, "summary", summary, "security", []any{}, "responses", rs))
	}
	ps.set("/openapi.json", o("get", o(
		"operationId", "getOpenAPI", "tags", []string{"service"}, "summary", "This document", "security", []any{},
		"responses", o("200", o("description", "The OpenAPI document", "content", o("application/json", o("schema", o("type", "object"))))),
	)))
	ps.set("/healthz", plain("getHealth", "Liveness: the gateway runs", "ok\n", 200))
	ps.set("/readyz", plain("getReady", "Readiness: the gateway can serve (the core and Redis answer)", "ready\n", 200, 503))
	return ps
}

// pathParams are the names of the templates of a path, in order.
func pathParams(p string) []string {
	var names []string
	for rest := p; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(rest[i:], '}')
		names = append(names, rest[i+1:i+j])
		rest = rest[i+j+1:]
	}
}

func operation(r Route) obj {
	tag := "account"
	if r.Kind != nil {
		tag = r.Kind.Root
	}
	op := o("operationId", r.OperationID, "tags", []string{tag}, "summary", r.Summary)
	desc := r.Doc
	if r.Gateway {
		desc = strings.TrimSpace(desc + " Answered by the gateway; the core does not know this path.")
	}
	if r.Class == route.Search || r.Class == route.ViewSearch {
		desc = strings.TrimSpace(desc + " " + searchDoc)
	}
	if desc != "" {
		op.set("description", desc)
	}
	params := []any{ref("parameters", "X-Request-Id")}
	get := r.Method == http.MethodGet
	cacheable := get && r.Class.Cacheable()
	if cacheable {
		params = append(params, ref("parameters", "If-None-Match"), ref("parameters", "Cache-Control"))
	}
	if write := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodDelete; write && !r.Gateway {
		params = append(params, ref("parameters", "Idempotency-Key"))
	}
	if r.Class == route.Record && (r.Method == http.MethodPut || r.Method == http.MethodDelete) {
		params = append(params, ref("parameters", "If-Match"), ref("parameters", "If-Unmodified-Since"))
	}
	switch r.Class {
	case route.Search:
		params = append(params, ref("parameters", "created_by"), ref("parameters", "last_updated_by"),
			ref("parameters", "field_conditions"), ref("parameters", "q"))
	case route.ViewSearch:
		params = append(params, ref("parameters", "created_by"), ref("parameters", "last_updated_by"),
			ref("parameters", "field_conditions"), ref("parameters", "view_q"))
	}
	op.set("parameters", params)
	if r.Body != "" {
		op.set("requestBody", o(
			"required", true,
			"description", "The fields to write, as XML or as JSON (Content-Type: application/json).",
			"content", o(
				"application/xml", o("schema", ref("schemas", r.Body+"_write")),
				"application/json", o("schema", ref("schemas", r.Body+"_write_document")),
			),
		))
	}
	rs := obj{}
	rs.set(strconv.Itoa(r.Status), success(r, cacheable))
	if cacheable {
		rs.set("304", ref("responses", "NotModified"))
	}
	errs := slices.Concat(commonErrors, r.Errors)
	slices.Sort(errs)
	for _, s := range errs {
		rs.set(strconv.Itoa(s), ref("responses", errorResponse(s)))
	}
	op.set("responses", rs)
	return op
}

const searchDoc = "Conditions are query parameters, all of which a record must meet. A generated client sends them as " +
	"name=value parameters: `created_by` and `last_updated_by` (a user id), `field_conditions` (`field_{n}={value}` pairs " +
	"of the account's fields, form style, exploded: a Picklist field takes an option value or user id, a Textbox field " +
	"one word of letters and digits), and `q`, each value one condition of the search condition language, the only " +
	"form of the comparisons of times, which are no name=value pairs: `q=created_time>1262493473` (sent as " +
	"`q=created_time%3E1262493473`) finds records created after that 10-digit UNIX timestamp; `created_time`, " +
	"`last_updated_time` and `deleted_time` take `<` or `>`, the others `=`. The same conditions may be written raw in " +
	"the query string (`?created_time>1262493473&field_103=1`), which no OpenAPI parameter can describe. " +
	"A view search takes no `deleted_time`: a view lists live records. An invalid condition is 400, naming it."

// success is the response of success of r.
func success(r Route, cacheable bool) obj {
	h := o("X-Request-Id", ref("headers", "X-Request-Id"))
	if cacheable {
		for _, n := range []string{"X-Cache", "Age", "ETag", "Cache-Control", "Vary"} {
			h.set(n, ref("headers", n))
		}
	}
	if r.Status == http.StatusCreated {
		h.set("Location", ref("headers", "Location"))
	}
	if !r.Gateway {
		h.set("RateLimit", ref("headers", "RateLimit"))
		h.set("RateLimit-Policy", ref("headers", "RateLimit-Policy"))
	}
	res := o("description", http.StatusText(r.Status), "headers", h)
	if len(r.Result) == 0 {
		return res
	}
	xmlSchema, jsonSchema := ref("schemas", r.Result[0]), ref("schemas", r.Result[0]+"_document")
	if len(r.Result) > 1 {
		name := strings.Join(r.Result, "_or_")
		xmlSchema, jsonSchema = ref("schemas", name), ref("schemas", name+"_document")
	}
	res.set("content", o(
		"application/xml", o("schema", xmlSchema),
		"application/json", o("schema", jsonSchema),
	))
	return res
}

// errorResponse names the component of an error status.
func errorResponse(status int) string { return "Error" + strconv.Itoa(status) }

// errorDoc says when each status of failure is answered.
var errorDoc = map[int]string{
	400: "Invalid request: a malformed request target, JSON that is malformed or has no XML form, or a record or condition that fails validation; the message says why.",
	401: "Credentials are missing or incorrect (or the api_key names no account).",
	404: "No such resource: an unknown path (a version-2 path under version 1 included), or a record, user, view or object that does not exist.",
	409: "The request conflicts with the state of the resource: the record is already deleted.",
	412: "Precondition failed: the record changed since the read whose ETag If-Match sends (or was modified after If-Unmodified-Since), or it is missing or deleted and If-Match was sent. Nothing was written: read it again.",
	422: "The Idempotency-Key was sent before with a different request.",
	413: "The request body is too large.",
	415: "The XML sent is not well formed.",
	429: "A rate limit was exceeded (or too many failed authentication attempts): try again after Retry-After seconds.",
	500: "An internal error of the core or the gateway.",
	502: "The core's answer could not be used (the gateway could not reach it, or could not translate its XML).",
	503: "A rate limit was exceeded, where the operator chose the mirrored service's status; or the gateway or core is overloaded; or the request waited too long in the gateway, or its deadline passed in the core, before anything was applied. Nothing was applied. Retry-After says when to try again.",
	504: "The core did not answer in time (or its deadline passed while a write was being committed): a write may have been applied.",
}

func components() obj {
	c := obj{}
	c.set("securitySchemes", o("basic", o("type", "http", "scheme", "basic",
		"description", "The username and password of a user of the account that {api_key} names.")))
	c.set("parameters", parameters())
	c.set("headers", headers())
	c.set("responses", responses())
	c.set("schemas", share(schemas()))
	return c
}

func parameters() obj {
	p := func(name, in, desc string, schema obj, required bool) obj {
		return o("name", name, "in", in, "description", desc, "required", required, "schema", schema)
	}
	id := o("type", "integer", "minimum", 1, "format", "int64")
	return o(
		"api_key", p("api_key", "path", "The key of the organisation's account.", o("type", "string", "pattern", "^[A-Za-z0-9_-]{1,128}$"), true),
		"api_prefix", p("api_prefix", "path", "The path segment of a custom object: the api_prefix of GET /object.",
			o("type", "string", "pattern", "^[a-z0-9]{1,32}$"), true),
		"id", p("id", "path", "The integer id of a record.", id, true),
		"view_id", p("view_id", "path", "The integer id of a view.", id, true),
		"field_id", p("field_id", "path", "The id of a field: the <id> of its definition in the field list.", id, true),
		"id_or_email", p("id_or_email", "path", "A user id (an integer) or an email address.",
			o("type", "string", "pattern", "^([1-9][0-9]*|[^/@]+@[^/]+)$"), true),
		"X-Request-Id", p("X-Request-Id", "header", "A request id of the caller's, echoed in the response (the gateway makes one otherwise).",
			o("type", "string", "maxLength", 128), false),
		"If-None-Match", p("If-None-Match", "header", "Entity tags of representations the caller holds: 304 when one is current.",
			o("type", "string"), false),
		"If-Match", p("If-Match", "header", "Entity tags of the record's representations the caller read (ETag), or *: the write is "+
			"applied only while one of them is current (strong comparison: a W/ tag never matches), else 412.",
			o("type", "string"), false),
		"If-Unmodified-Since", p("If-Unmodified-Since", "header", "An HTTP date: 412 when the record's last_updated_time is later. "+
			"Ignored when If-Match is sent, or when it is no valid date.", o("type", "string"), false),
		"Idempotency-Key", p("Idempotency-Key", "header", "A key of the caller's choosing (IETF Idempotency-Key draft; a UUID, say), "+
			"quoted or not: the first time the write is applied its outcome is kept for a day per account, user and key, and a "+
			"retry with the key gets that outcome again (Idempotent-Replayed: true) without applying anything. The same key "+
			"with another method, path or body is 422. A refused write (4xx) keeps nothing.",
			o("type", "string", "minLength", 1, "maxLength", 257), false),
		"Cache-Control", p("Cache-Control", "header", "no-cache asks the gateway to fetch the resource from the core (X-Cache: BYPASS).",
			o("type", "string"), false),
		"created_by", p("created_by", "query", "Created by that user.", id, false),
		"last_updated_by", p("last_updated_by", "query", "Last updated by that user.", id, false),
		"field_conditions", append(p("field_conditions", "query",
			"field_{n}={value}: a Picklist field equals an option value or user id, or a Textbox field equals letters and digits. "+
				"Each property is one parameter (form style, exploded: field_103=2). A client that serializes objects otherwise "+
				"must be told to use this style: openapi-fetch sends deepObject (field_conditions[field_103]=2, refused) unless "+
				"created with querySerializer: {object: {style: \"form\", explode: true}}. The same conditions may be sent as q.",
			o("type", "object", "patternProperties", o("^field_[0-9]+$", o("anyOf", []any{o("type", "integer"), o("type", "string", "pattern", "^[A-Za-z0-9]+$")}))), false),
			member{"style", "form"}, member{"explode", true}),
		"q", searchQ("q", true),
		"view_q", searchQ("q", false),
	)
}

// searchQ is the q parameter of a search: conditions of the search condition language, one per value, the form
// of every condition a generated client can send (the comparisons of times are no name=value pairs). A view
// search takes no deleted_time.
func searchQ(name string, deleted bool) obj {
	times := "created_time|last_updated_time"
	if deleted {
		times += "|deleted_time"
	}
	cond := o("type", "string", "pattern", "^(("+times+")[<>][1-9][0-9]{9}|(created_by|last_updated_by)=[0-9]+|field_[0-9]+=[^&<>=]+)$",
		"examples", []string{"created_time>1262493473", "last_updated_time<1767225600", "field_103=2", "created_by=1"})
	desc := "Conditions of the search condition language, one per value: q=created_time>1262493473&q=field_103=2 " +
		"(each value percent-encoded as usual: q=created_time%3E1262493473). Times take < or > and a 10-digit UNIX timestamp " +
		"(created_time, last_updated_time"
	if deleted {
		desc += ", and deleted_time, which finds deleted records only"
	}
	desc += "); created_by, last_updated_by and field_{n} take =."
	return o("name", name, "in", "query", "description", desc, "required", false,
		"style", "form", "explode", true, "schema", o("type", "array", "items", cond, "maxItems", 32))
}

func headers() obj {
	h := func(desc string, schema obj) obj { return o("description", desc, "schema", schema) }
	str, integer := o("type", "string"), o("type", "integer", "minimum", 0)
	return o(
		"X-Request-Id", append(h("The request's id: the caller's X-Request-Id, or one the gateway made.", str), member{"required", true}),
		"X-Cache", h("How the gateway answered a cacheable read: from its cache (HIT, or STALE while it refreshes), from the core (MISS), or from the core at the caller's request (BYPASS).",
			o("type", "string", "enum", []string{"HIT", "MISS", "STALE", "BYPASS"})),
		"Age", h("Seconds since the cached answer was fetched from the core.", integer),
		"ETag", h("The entity tag of this representation (XML or JSON, and its content coding); a record's tag may be sent back in If-Match to make a PUT or DELETE conditional.", str),
		"Cache-Control", h("private, no-cache: a client may keep the answer but must revalidate it (If-None-Match).", str),
		"Vary", h("Accept, Accept-Encoding: the representation depends on them.", str),
		"RateLimit", h("The state of the rate policy that applies (IETF RateLimit header fields), when a policy limits the caller.", str),
		"RateLimit-Policy", h("The rate policy that applies, when one limits the caller.", str),
		"Retry-After", h("Seconds to wait before trying again.", integer),
		"Location", append(h("The URL of the new record: {base_url}/<segment>/<new id>, in the request's API version.", o("type", "string", "format", "uri")), member{"required", true}),
		"WWW-Authenticate", h(`Basic realm="reqgate"`, str),
	)
}

func responses() obj {
	r := obj{}
	r.set("NotModified", o("description", "Not Modified: the representation named by If-None-Match is current.",
		"headers", o("X-Request-Id", ref("headers", "X-Request-Id"), "ETag", ref("headers", "ETag"))))
	for _, s := range []int{400, 401, 404, 409, 412, 413, 415, 422, 429, 500, 502, 503, 504} {
		h := o("X-Request-Id", ref("headers", "X-Request-Id"))
		switch s {
		case 401:
			h.set("WWW-Authenticate", ref("headers", "WWW-Authenticate"))
		case 429, 503:
			h.set("Retry-After", ref("headers", "Retry-After"))
			h.set("RateLimit", ref("headers", "RateLimit"))
			h.set("RateLimit-Policy", ref("headers", "RateLimit-Policy"))
		}
		r.set(errorResponse(s), o(
			"description", errorDoc[s],
			"headers", h,
			"content", o(
				"application/xml", o("schema", ref("schemas", "error")),
				"application/json", o("schema", ref("schemas", "error_document")),
			),
		))
	}
	return r
}

// schemas are the schemas of every document of the interface: the element (the XML form) and its JSON
// document ({"<root>": element}), for every root the route table names, plus the error and the write bodies.
func schemas() obj {
	s := obj{}
	var roots, writes []string
	for _, r := range Routes() {
		for _, root := range r.Result {
			if !slices.Contains(roots, root) {
				roots = append(roots, root)
			}
		}
		if r.Body != "" && !slices.Contains(writes, r.Body) {
			writes = append(writes, r.Body)
		}
	}
	roots = append(roots, "error")
	for _, r := range Routes() {
		// A choice of roots is a schema of its own, named after them: user_or_users.
		if name := strings.Join(r.Result, "_or_"); len(r.Result) > 1 && s.get(name) == nil {
			var xs, js []any
			for _, root := range r.Result {
				xs = append(xs, ref("schemas", root))
				js = append(js, ref("schemas", root+"_document"))
			}
			s.set(name, o("oneOf", xs))
			s.set(name+"_document", o("oneOf", js))
		}
	}
	add := func(name, root string, write bool) {
		s.set(name, rootSchema(root, write))
		s.set(name+"_document", o("type", "object", "properties", o(root, ref("schemas", name)),
			"required", []string{root}, "additionalProperties", false))
	}
	for _, root := range roots {
		add(root, root, false)
	}
	for _, root := range writes {
		add(root+"_write", root, true)
	}
	return s
}
