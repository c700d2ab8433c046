package translate

// This file is the schema of the interface of docs/api.md as far as the JSON mapping needs it: which
// children repeat (always JSON arrays), which texts are integers (JSON numbers), which elements hold only
// elements (so whitespace in them is layout), and the order of children and attributes (JSON key order, and
// XML element order when a client's JSON is turned into a request body). It is the only place that knows the
// interface; the codecs are generic.

// elemInfo describes one element of the interface in one context.
type elemInfo struct {
	// order lists the known children in interface order; unknown children follow, in document order.
	order []string
	// attrs lists the known attributes in interface order.
	attrs []string
	// arrays are children that are JSON arrays even with zero or one item. A child marked always is also
	// written as [] when it is absent (the containers whose only content is that list).
	arrays map[string]arrayKind
	// intAttrs are attributes whose values are integers.
	intAttrs map[string]bool
	// integer: the element's text is an integer.
	integer bool
	// container: the element holds only elements, so text made of whitespace only is layout, not data.
	container bool
	// nullable are children whose empty form (no text, attribute or child element) is JSON null: values
	// whose set form is an object, so that an empty one is not the string "" (docs/json.md, rule 4).
	// nullableIf, when set, limits this to elements that have a child of that name.
	nullable   map[string]bool
	nullableIf string
	// byParent overrides this description when the element's parent has the given name ("" for the root).
	byParent map[string]*elemInfo
	// variant replaces this description for an element that has a child named variantKey.
	variant    *elemInfo
	variantKey string
}

type arrayKind uint8

const (
	whenPresent arrayKind = 1 // array when the child occurs
	always      arrayKind = 2 // array, written as [] when the child does not occur
)

// Record kinds: the root of a record read and of its field list, and the element of a record summary.
var recordKinds = []string{"requirement", "feature", "use_case", "custom_object"}

// summaryOrder is the child order of a record summary (view contents, search results, related items) and of
// a record read (which has fields only); the two never share children, so one list serves both.
var summaryOrder = []string{"relationship_type", "id", "id_prefix", "title", "version_number", "created_time",
	"last_updated_time", "created_by", "last_updated_by", "fields"}

// stampAttrs are the attributes of created_time, last_updated_time and activity_time.
var stampAttrs = []string{"unit"}

// schema maps an element name to its description.
var schema = buildSchema()

func buildSchema() map[string]*elemInfo {
	ints := func(names ...string) map[string]bool {
		m := make(map[string]bool, len(names))
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	arr := func(kind arrayKind, names ...string) map[string]arrayKind {
		m := make(map[string]arrayKind, len(names))
		for _, n := range names {
			m[n] = kind
		}
		return m
	}
	s := map[string]*elemInfo{}
	leafInt := &elemInfo{integer: true}
	for _, n := range []string{"id", "user_id", "view_id", "version_number", "created_by", "last_updated_by",
		"sort", "try_again_after", "max_size", "required", "option_sort", "option_default"} {
		s[n] = leafInt
	}
	for _, n := range []string{"created_time", "last_updated_time", "activity_time"} {
		s[n] = &elemInfo{integer: true, attrs: stampAttrs}
	}

	// Records and summaries; custom_object is also a plain Yes/No child of <object>.
	for _, k := range recordKinds {
		s[k] = &elemInfo{order: summaryOrder, container: true}
		s[k+"_fields"] = &elemInfo{order: []string{"fields"}, container: true}
		plural := k + "s"
		s[plural] = &elemInfo{order: []string{k}, arrays: arr(always, k), container: true}
	}
	s["custom_object"].byParent = map[string]*elemInfo{"object": {}}

	s["fields"] = &elemInfo{order: []string{"field"}, arrays: arr(always, "field"), container: true}
	// A field of a record read (name, label, value, prefix or value_plaintext, list_type, sort: docs/api.md,
	// Record read, and the core) and a field definition (which always has <type>) order their children differently.
	// A picklist's value (a read field with <list_type>) is an object when set, so null when empty: the
	// empty <value /> is the same for one choice and several, the read does not say which the field takes.
	s["field"] = &elemInfo{order: []string{"name", "label", "value", "prefix", "value_plaintext", "list_type",
		"sort"}, container: true, nullable: ints("value"), nullableIf: "list_type", variantKey: "type",
		variant: &elemInfo{order: []string{"id", "name", "label", "type", "sort", "help", "required",
			"default_value", "max_size", "special_purpose", "list_type", "picklist_options"}, container: true}}
	// <value>: a field value (text, or @id/@email and text for picklists, or <value> items for a multiple
	// picklist); the integer value of a picklist option.
	s["value"] = &elemInfo{order: []string{"value"}, attrs: []string{"id", "email"}, intAttrs: ints("id"),
		arrays:   arr(whenPresent, "value"),
		byParent: map[string]*elemInfo{"option": leafInt}}
	s["picklist_options"] = &elemInfo{order: []string{"option"}, arrays: arr(always, "option"), container: true}
	s["option"] = &elemInfo{order: []string{"value", "label", "desc", "option_sort", "option_default"},
		container: true}

	s["users"] = &elemInfo{order: []string{"user"}, arrays: arr(always, "user"), container: true}
	s["user"] = &elemInfo{order: []string{"user_id", "email", "username", "firstname", "lastname", "deleted",
		"status"}, container: true}

	s["objects"] = &elemInfo{order: []string{"object"}, arrays: arr(always, "object"), container: true}
	s["object"] = &elemInfo{order: []string{"object_unique_id", "api_prefix", "name_singular", "name_plural",
		"description", "id_prefix", "custom_object", "deploy_status"}, container: true}

	s["views"] = &elemInfo{order: []string{"view"}, arrays: arr(always, "view"), container: true}
	// <view> is an item of <views> and the root of view contents (record summaries, any kind).
	s["view"] = &elemInfo{order: append([]string{"view_id", "name", "description", "created_by_firstname",
		"created_by_lastname"}, recordKinds...), arrays: arr(whenPresent, recordKinds...), container: true}
	s["search_results"] = &elemInfo{order: recordKinds, arrays: arr(whenPresent, recordKinds...),
		container: true}

	s["relationships"] = &elemInfo{order: []string{"requirements", "features", "use_cases", "custom_objects"},
		attrs: []string{"id_prefix", "id"}, intAttrs: ints("id"), container: true}

	s["history_items"] = &elemInfo{order: []string{"history"}, arrays: arr(always, "history"), container: true}
	// A change does not say its field's type, and old_value or new_value is an object for most types (a
	// picklist, a date, a checkbox): an empty one is null whatever the type.
	s["history"] = &elemInfo{order: []string{"user_id", "action", "old_value", "new_value", "activity_time"},
		container: true, nullable: ints("old_value", "new_value")}
	change := &elemInfo{order: []string{"value", "year", "month", "date", "timezone"},
		attrs: []string{"id", "email", "value"}, intAttrs: ints("id", "value"), arrays: arr(whenPresent, "value")}
	s["old_value"], s["new_value"] = change, change

	s["error"] = &elemInfo{order: []string{"code", "message", "try_again_after"}, container: true}
	s["rate_throttle_status"] = &elemInfo{order: []string{"api_available", "try_again_after"}, container: true}

	return s
}

// forChildren returns the description that applies to an element given whether it has the child that
// selects the variant.
func (e *elemInfo) forChildren(has func(name string) bool) *elemInfo {
	if e.variant != nil && has(e.variantKey) {
		return e.variant
	}
	return e
}

// noInfo describes an element the schema does not know: text stays text, order is document order, and a
// child is an array only when it repeats.
var noInfo = &elemInfo{}

// lookup returns the description of element name under parent ("" for the root).
func lookup(parent, name string) *elemInfo {
	e := schema[name]
	if e == nil {
		return noInfo
	}
	if e.byParent != nil {
		if o := e.byParent[parent]; o != nil {
			return o
		}
	}
	return e
}

// rank is the position of name in order, or len(order) when it is not listed.
func rank(order []string, name string) int {
	for i, n := range order {
		if n == name {
			return i
		}
	}
	return len(order)
}

// IsContainer reports whether element name under parent holds only elements, so that whitespace-only text
// in it is layout. A reader comparing documents of the interface needs it (translate/corecheck compares the
// core's documents with their round trip through JSON by this rule).
func IsContainer(parent, name string) bool { return lookup(parent, name).container }
