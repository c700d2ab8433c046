package translate

// Element is what the schema of the interface says about one element in one context: the codecs' own
// description, read-only, for documents that describe the JSON mapping (the OpenAPI document of
// gateway/openapi is generated from it, so it cannot disagree with the translation).
type Element struct {
	// Known is false for an element the schema does not know: its text is text, its children come in
	// document order, and a child is an array only when it repeats.
	Known bool
	// Children are the known children, in interface order.
	Children []string
	// Attrs are the known attributes, in interface order; IntAttrs those whose values are integers.
	Attrs    []string
	IntAttrs []string
	// Arrays are the children that are JSON arrays even with zero or one item; Always those of them that are
	// written as [] when absent.
	Arrays []string
	Always []string
	// Nullable are the children that are JSON null when empty (an empty integer is null too); NullableIf, when
	// not "", limits that to an element that has the child NullableIf.
	Nullable   []string
	NullableIf string
	// Integer: the element's text is an integer of the interface (a JSON number when it is written as a plain
	// decimal integer, null when empty).
	Integer bool
	// Container: the element holds only elements.
	Container bool
	// Variant, when not nil, replaces this description for an element that has the child VariantKey.
	Variant    *Element
	VariantKey string
}

// Describe returns the description of element name under parent ("" for the root). The slices are fresh
// copies.
func Describe(parent, name string) Element {
	if schema[name] == nil {
		return Element{}
	}
	return describe(lookup(parent, name))
}

func describe(e *elemInfo) Element {
	d := Element{
		Known:      true,
		Children:   append([]string(nil), e.order...),
		Attrs:      append([]string(nil), e.attrs...),
		Integer:    e.integer,
		Container:  e.container,
		NullableIf: e.nullableIf,
	}
	for _, a := range e.attrs {
		if e.intAttrs[a] {
			d.IntAttrs = append(d.IntAttrs, a)
		}
	}
	for _, c := range e.order {
		if e.nullable[c] {
			d.Nullable = append(d.Nullable, c)
		}
		switch e.arrays[c] {
		case always:
			d.Always = append(d.Always, c)
			fallthrough
		case whenPresent:
			d.Arrays = append(d.Arrays, c)
		}
	}
	if e.variant != nil {
		v := describe(e.variant)
		d.Variant, d.VariantKey = &v, e.variantKey
	}
	return d
}
