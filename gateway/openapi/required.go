package openapi

import (
	"slices"
	"strings"
)

// This file says which keys of a response object are always there, so that a generated client can type
// them as present (TypeScript's strict mode, Go's non-pointer fields). It follows what the core and the
// gateway write (core/api: recordxml.go, search.go, users.go, objects.go, views.go, related.go, history.go;
// gateway: errors.go, throttle.go): every element they write whatever the data, and every attribute they
// always set. The JSON translation keeps every element (an empty one is "" or null), so what the XML always
// has the JSON always has; the tests validate every response of an end-to-end run against these lists.

// summaryKeys are the children of a record summary (view contents, search results, related items).
var summaryKeys = []string{"id", "id_prefix", "title", "version_number", "created_time", "last_updated_time",
	"created_by", "last_updated_by"}

// alwaysKeys are the keys always present in an element by its name, where its name alone decides.
var alwaysKeys = map[string][]string{
	"user":   {"user_id", "email", "username", "firstname", "lastname", "deleted", "status"},
	"object": {"object_unique_id", "api_prefix", "name_singular", "name_plural", "description", "id_prefix", "custom_object", "deploy_status"},
	"option": {"value", "label", "desc", "option_sort", "option_default"},
	// A change of field history.
	"history":       {"user_id", "action", "old_value", "new_value", "activity_time"},
	"relationships": {"@id_prefix", "@id"},
	// Every error has a message; a throttled call's has code and try_again_after too.
	"error":                {"message"},
	"rate_throttle_status": {"api_available"},
	// Timestamps of summaries and history always carry unit="GMT Timestamp".
	"created_time":      {"@unit", "#text"},
	"last_updated_time": {"@unit", "#text"},
	"activity_time":     {"@unit", "#text"},
}

// required are the keys of the object form of element name at path (the names of its ancestors, root
// first) that every response has, or, in a request body (write), that the core refuses a body without: a
// field to write has a name and a value (null or [] clears it).
func required(path []string, name string, write bool) []string {
	if write {
		if name == "field" {
			return []string{"name", "value"}
		}
		return nil
	}
	parent := parentOf(path)
	switch {
	case slices.Contains(recordRoots(), strings.TrimSuffix(name, "_fields")) && parent == "":
		return []string{"fields"} // a record read, a field list
	case slices.Contains(recordRoots(), name) && isGroup(parent):
		return append([]string{"relationship_type"}, summaryKeys...)
	case slices.Contains(recordRoots(), name) && parent != "object":
		return summaryKeys
	case name == "field" && len(path) > 0 && strings.HasSuffix(path[0], "_fields"):
		// A field definition; the id field has no <id>, the others have one, and picklists add list_type and
		// picklist_options.
		return []string{"name", "label", "type", "sort", "help", "required", "default_value", "max_size", "special_purpose"}
	case name == "field":
		// A field of a record read; prefix, value_plaintext and list_type belong to some fields only.
		return []string{"name", "label", "value", "sort"}
	case name == "view" && parent == "views":
		return []string{"view_id", "name", "description", "created_by_firstname", "created_by_lastname"}
	case name == "view":
		return nil // view contents: the summaries, none when the view is empty
	}
	return alwaysKeys[name]
}
