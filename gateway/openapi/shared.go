package openapi

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// share gives a schema that occurs more than once in schemas a component of its own, referred to wherever it
// occurs: a summary, a user, a timestamp is then one named schema (and one type in a generated client), not a
// copy in every document that holds one. It repeats until no schema occurs twice.
func share(schemas obj) obj {
	for {
		count := map[string]int{}
		first := map[string]string{} // key -> the name its first occurrence suggests
		own := map[string]string{}   // key -> component whose whole schema it is
		for _, m := range schemas {
			s := m.value.(obj)
			own[key(s)] = m.key
			walk(s, "", "", func(n obj, name, parent string) {
				k := key(n)
				count[k]++
				if _, ok := first[k]; !ok {
					first[k] = suggest(m.key, name, parent)
					if isList(n) {
						first[k] += "_list"
					}
				}
			})
		}
		refs := map[string]obj{}
		for k, n := range count {
			if c, ok := own[k]; ok {
				refs[k] = ref("schemas", c)
			} else if n > 1 {
				refs[k] = nil // named below, in document order
			}
		}
		if len(refs) == 0 {
			return schemas
		}
		var added obj
		for _, m := range schemas {
			walk(m.value.(obj), "", "", func(n obj, _, _ string) {
				k := key(n)
				if r, ok := refs[k]; ok && r == nil {
					name := unique(schemas, added, first[k])
					added = append(added, member{name, slices.Clone(n)})
					refs[k] = ref("schemas", name)
				}
			})
		}
		schemas = append(schemas, added...)
		for i, m := range schemas {
			schemas[i].value = replace(m.value.(obj), refs, true)
		}
	}
}

// key is the canonical text of a schema.
func key(s obj) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic("openapi: " + err.Error())
	}
	return string(b)
}

// shareable reports whether a schema is worth a component: an object, or a choice of forms.
func shareable(s obj) bool { return s.get("type") == "object" || s.get("anyOf") != nil }

// isList reports whether s is the list-or-item choice of a request body.
func isList(s obj) bool {
	alts, ok := s.get("anyOf").([]any)
	return ok && len(alts) > 0 && alts[0].(obj).get("type") == "array"
}

// walk calls f for every shareable schema below s (not s itself), with the element it describes and that
// element's parent.
func walk(s obj, name, parent string, f func(n obj, name, parent string)) {
	visit := func(c any, cname, cparent string) {
		n, ok := c.(obj)
		if !ok {
			return
		}
		if shareable(n) && n.get("$ref") == nil {
			f(n, cname, cparent)
		}
		walk(n, cname, cparent, f)
	}
	if props, ok := s.get("properties").(obj); ok {
		for _, p := range props {
			visit(p.value, p.key, name)
		}
	}
	if items := s.get("items"); items != nil {
		visit(items, name, parent)
	}
	if alts, ok := s.get("anyOf").([]any); ok {
		for _, a := range alts {
			if n, ok := a.(obj); ok {
				walk(n, name, parent, f)
			}
		}
	}
}

// replace returns s with every shareable schema below it that refs names replaced by its reference; root says
// that s is a component's own schema, which stays.
func replace(s obj, refs map[string]obj, root bool) obj {
	if !root && shareable(s) {
		if r := refs[key(s)]; r != nil {
			return r
		}
	}
	out := slices.Clone(s)
	for i, m := range out {
		switch v := m.value.(type) {
		case obj:
			if m.key == "properties" {
				props := slices.Clone(v)
				for j, p := range props {
					props[j].value = replace(p.value.(obj), refs, false)
				}
				out[i].value = props
			} else if m.key == "items" {
				out[i].value = replace(v, refs, false)
			}
		case []any:
			if m.key == "anyOf" {
				alts := slices.Clone(v)
				for j, a := range alts {
					if n, ok := a.(obj); ok {
						alts[j] = replace(n, refs, false)
					}
				}
				out[i].value = alts
			}
		}
	}
	return out
}

// suggest names a shared schema after the element it describes (name, under parent, in the schema of
// component root): record summaries and relationship items by their kind, timestamps as one, and the parts
// of records, field lists and write bodies after what they are part of.
func suggest(root, name, parent string) string {
	if slices.Contains(recordRoots(), name) {
		if isGroup(parent) {
			return name + "_relationship"
		}
		return name + "_summary"
	}
	if shared, ok := sharedNames[name]; ok {
		return shared
	}
	switch name {
	case "fields", "field":
		return partOf(root) + "_" + name
	case "value":
		return valueName(root, parent)
	}
	return qualified(parent, name)
}

// sharedNames are the names of the schemas of elements that are the same wherever they occur.
var sharedNames = map[string]string{
	"created_time":      "timestamp",
	"last_updated_time": "timestamp",
	"activity_time":     "timestamp",
	"option":            "picklist_option",
	"picklist_options":  "picklist_options",
	"old_value":         "history_value",
	"new_value":         "history_value",
	"sort":              "integer_or_null",
	"max_size":          "integer_or_null",
}

// partOf names what the schemas of component root are part of: a field list's definitions, a write body,
// history items, or a record.
func partOf(root string) string {
	switch {
	case strings.HasSuffix(root, "_fields"):
		return "definition"
	case strings.HasSuffix(root, "_write"):
		return "write"
	case strings.HasPrefix(root, "history"):
		return "history"
	}
	return "record"
}

// valueName names the schema of a <value> under parent: a picklist value, a field's value, or the picklist
// value of a history item.
func valueName(root, parent string) string {
	switch parent {
	case "value":
		return partOf(root) + "_picklist_value"
	case "field":
		return partOf(root) + "_value"
	case "old_value", "new_value":
		return "history_picklist_value"
	}
	return qualified(parent, "value")
}

// qualified is name under parent, or name at the root.
func qualified(parent, name string) string {
	if parent != "" {
		return parent + "_" + name
	}
	return name
}

// unique is name, or name with a number, so that it names no component yet.
func unique(schemas, added obj, name string) string {
	taken := func(n string) bool { return schemas.get(n) != nil || added.get(n) != nil }
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		if n := name + "_" + strconv.Itoa(i); !taken(n) {
			return n
		}
	}
}
