package openapi

import (
	"slices"
	"strings"

	"github.com/reqgate/reqgate/translate"
)

// This file turns translate's schema of the interface into JSON Schemas. One schema serves both faces: the
// properties are the element's children and "@"-attributes, named as in the JSON mapping (docs/json.md), and
// each carries what the XML form needs (OpenAPI's xml object: attribute, element names; arrays are unwrapped,
// as the interface has a container element of its own around every list). The text of an element that also
// has attributes is the "#text" property, marked with the xml extension x-text (OpenAPI 3.1 has no way to
// say "the element's text").
//
// translate describes an element once for all the places it occurs; where that one description covers
// several shapes of the interface, narrow picks the shape of the place, so the document says what each
// response holds.

// recordRoots are the root elements of records, and the element names of their summaries.
func recordRoots() []string {
	var r []string
	for _, k := range Kinds {
		r = append(r, k.Root)
	}
	return r
}

// groups are the containers of relationship items: requirements, features, use_cases, custom_objects.
func isGroup(name string) bool {
	for _, k := range Kinds {
		if name == k.Root+"s" {
			return true
		}
	}
	return false
}

// narrow picks the shape of element name at path (the names of its ancestors, root first) among those that
// translate's one description covers. write selects the shape of a request body.
func narrow(path []string, name string, e translate.Element, write bool) translate.Element {
	switch {
	case slices.Contains(recordRoots(), name):
		return narrowRecord(e, parentOf(path))
	case name == "field":
		return narrowField(path, e, write)
	case name == "view":
		return narrowView(e, parentOf(path))
	}
	return e
}

// parentOf is the parent of the element at path: its last name, "" at the root.
func parentOf(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}

// narrowRecord picks the shape of a record's root element under parent.
func narrowRecord(e translate.Element, parent string) translate.Element {
	switch {
	case parent == "":
		// A record read or write: <fields> only.
		e.Children = []string{"fields"}
	case e.Known && len(e.Children) > 0:
		// A record summary; relationship_type only in a group of related items.
		e.Children = without(e.Children, "fields")
		if !isGroup(parent) {
			e.Children = without(e.Children, "relationship_type")
		}
	}
	return e
}

// narrowField picks the shape of a <field> at path: a definition in a field list, a name and value to write.
func narrowField(path []string, e translate.Element, write bool) translate.Element {
	if e.Variant != nil && strings.HasSuffix(path[0], "_fields") {
		e = *e.Variant
	}
	if write {
		e.Children = []string{"name", "value"}
	}
	return e
}

// narrowView picks the shape of a <view> under parent: an item of the view list, or a view's contents.
func narrowView(e translate.Element, parent string) translate.Element {
	switch parent {
	case "views":
		// An item of the view list.
		e.Children = without(e.Children, recordRoots()...)
		e.Arrays, e.Always = nil, nil
	case "":
		// View contents: summaries only.
		kinds := recordRoots()
		e.Children = slices.DeleteFunc(slices.Clone(e.Children), func(c string) bool { return !slices.Contains(kinds, c) })
	}
	return e
}

func without(list []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(drop, s) })
}

// mayBeEmpty reports whether the integer element name under parent may also be empty (JSON null): the
// <sort /> of system fields, the <max_size /> of picklists, and the option <value /> of a user picklist.
func mayBeEmpty(parent, name string) bool {
	return name == "sort" || name == "max_size" || parent == "option" && name == "value"
}

// elementSchema is the schema of element name at path.
func elementSchema(path []string, name string, write bool) obj {
	parent := parentOf(path)
	e := narrow(path, name, translate.Describe(parent, name), write)
	if write && name == "value" && parent == "field" {
		// JSON numbers and booleans are written as their literal text, null and [] as the empty value
		// (docs/json.md, JSON to XML).
		return o("anyOf", []any{o("type", "string"), o("type", "number"), o("type", "boolean"), o("type", "null"),
			o("type", "array", "maxItems", 0)})
	}
	text := textSchema(parent, name, e)
	if len(e.Children) == 0 && len(e.Attrs) == 0 {
		return text
	}
	s := objectSchema(path, name, e, text, write)
	if e.Container {
		return s
	}
	// An element with attributes or children that may come as text alone, or as null when empty where its
	// parent says so (docs/json.md, rule 10). One that always has an attribute never comes as text alone.
	alts := []any{text, s}
	if slices.ContainsFunc(required(path, name, write), func(k string) bool { return strings.HasPrefix(k, "@") }) {
		alts = alts[1:]
	}
	if nullableChild(path, name) {
		alts = append(alts, o("type", "null"))
	}
	if len(alts) == 1 {
		return s
	}
	return o("anyOf", alts)
}

// nullableChild reports whether element name at path is one its parent writes as null when empty: a record
// read's picklist value, a history item's old_value and new_value.
func nullableChild(path []string, name string) bool {
	if len(path) == 0 {
		return false
	}
	parent := translate.Describe(parentOf(path[:len(path)-1]), parentOf(path))
	return slices.Contains(parent.Nullable, name)
}

// objectSchema is the schema of element name at path as a JSON object: its attributes, its text (beside
// attributes) and its children.
func objectSchema(path []string, name string, e translate.Element, text obj, write bool) obj {
	props := obj{}
	for _, a := range e.Attrs {
		t := "string"
		if slices.Contains(e.IntAttrs, a) {
			t = "integer"
		}
		props.set("@"+a, o("type", t, "xml", o("name", a, "attribute", true)))
	}
	if !e.Container {
		// Text beside attributes; with child elements instead (a multiple picklist value) it is absent.
		props.set("#text", append(slices.Clone(text), member{"xml", o("x-text", true)}))
	}
	sub := append(slices.Clone(path), name)
	for _, c := range e.Children {
		if c == name && parentOf(path) == name {
			continue // <value> in <value> in <value>: the interface nests a value once only
		}
		props.set(c, childSchema(sub, c, e, write))
	}
	// Required: the lists written as [] when absent, and what every response has (required.go).
	always := required(path, name, write)
	var req []string
	for _, p := range props {
		if slices.Contains(always, p.key) || slices.Contains(e.Arrays, p.key) && slices.Contains(e.Always, p.key) {
			req = append(req, p.key)
		}
	}
	s := o("type", "object", "properties", props)
	if len(req) > 0 {
		s.set("required", req)
	}
	s.set("additionalProperties", false)
	return s
}

// childSchema is the schema of child c of element e at path sub: an array of c when e holds a list of them.
func childSchema(sub []string, c string, e translate.Element, write bool) obj {
	cs := elementSchema(sub, c, write)
	if !slices.Contains(e.Arrays, c) {
		return cs
	}
	item := append(cs, member{"xml", o("name", c)})
	list := o("type", "array", "items", item)
	if write {
		// A request may give a list of one as the item alone (docs/json.md, JSON to XML).
		return o("anyOf", []any{list, item})
	}
	return list
}

// textSchema is the schema of the text of element name: an integer of the interface, or a string.
func textSchema(parent, name string, e translate.Element) obj {
	if !e.Integer {
		return o("type", "string")
	}
	if mayBeEmpty(parent, name) {
		return o("anyOf", []any{o("type", "integer"), o("type", "null")})
	}
	return o("type", "integer")
}

// rootSchema is the schema of a document whose root is name: the element's schema, named for XML.
func rootSchema(name string, write bool) obj {
	s := elementSchema(nil, name, write)
	s.set("xml", o("name", name))
	return s
}
