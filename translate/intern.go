package translate

// internEntry is a name of the interface and its description (nil for names that only occur as children
// or attributes).
type internEntry struct {
	name string
	info *elemInfo
}

// interned holds the names of the interface, so that reading them does not allocate and one map lookup
// finds both the name and its description.
var interned = func() map[string]internEntry {
	m := map[string]internEntry{"unit": {name: "unit"}, "email": {name: "email"}}
	add := func(names []string) {
		for _, n := range names {
			if _, ok := m[n]; !ok {
				m[n] = internEntry{name: n, info: schema[n]}
			}
		}
	}
	for name, e := range schema {
		m[name] = internEntry{name: name, info: e}
		add(e.order)
		add(e.attrs)
		if e.variant != nil {
			add(e.variant.order)
		}
	}
	return m
}()

// intern returns b as a string, shared for the names of the interface.
func intern(b []byte) string {
	if e, ok := interned[string(b)]; ok {
		return e.name
	}
	return string(b)
}

// internElem returns element name b and its description under parent.
func internElem(b []byte, parent string) (string, *elemInfo) {
	e, ok := interned[string(b)]
	if !ok {
		return string(b), noInfo
	}
	if e.info == nil {
		return e.name, noInfo
	}
	if e.info.byParent != nil {
		if o := e.info.byParent[parent]; o != nil {
			return e.name, o
		}
	}
	return e.name, e.info
}
