package translate

import (
	"slices"
	"testing"
)

// TestDescribe checks that Describe reports what the codecs use: the same order, arrays and integers as
// ChildOrder, IsArray and IsInteger, and the variant of a field definition.
func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		parent, name string
		children     []string
		attrs        []string
		intAttrs     []string
		always       []string
		integer      bool
		known        bool
	}{
		{"", "users", []string{"user"}, nil, nil, []string{"user"}, false, true},
		{"record", "created_time", nil, []string{"unit"}, nil, nil, true, true},
		{"", "relationships", []string{"requirements", "features", "use_cases", "custom_objects"}, []string{"id_prefix", "id"}, []string{"id"}, nil, false, true},
		{"option", "value", nil, nil, nil, nil, true, true},
		{"field", "value", []string{"value"}, []string{"id", "email"}, []string{"id"}, nil, false, true},
		{"user", "email", nil, nil, nil, nil, false, false},
	} {
		t.Run(tc.parent+"/"+tc.name, func(t *testing.T) {
			d := Describe(tc.parent, tc.name)
			if d.Known != tc.known || d.Integer != tc.integer || !slices.Equal(d.Children, tc.children) ||
				!slices.Equal(d.Attrs, tc.attrs) || !slices.Equal(d.IntAttrs, tc.intAttrs) || !slices.Equal(d.Always, tc.always) {
				t.Errorf("Describe = %+v", d)
			}
			info := lookup(tc.parent, tc.name)
			if got, want := d.Children, info.order; !slices.Equal(got, want) {
				t.Errorf("children %v, the schema's order %v", got, want)
			}
			for _, c := range d.Children {
				if got, want := slices.Contains(d.Arrays, c), info.arrays[c] != 0; got != want {
					t.Errorf("child %s: array %v, the schema's %v", c, got, want)
				}
			}
			if got, want := d.Integer, info.integer; got != want {
				t.Errorf("integer %v, the schema's %v", got, want)
			}
		})
	}
	f := Describe("fields", "field")
	if f.Variant == nil || f.VariantKey != "type" || !slices.Contains(f.Variant.Children, "picklist_options") {
		t.Errorf("field: variant %+v by %q, want the field definition by <type>", f.Variant, f.VariantKey)
	}
	if !slices.Equal(f.Nullable, []string{"value"}) || f.NullableIf != "list_type" || len(f.Variant.Nullable) != 0 {
		t.Errorf("field: nullable %v if %q (definition %v), want a read's value when it has list_type", f.Nullable, f.NullableIf, f.Variant.Nullable)
	}
	if h := Describe("history_items", "history"); !slices.Equal(h.Nullable, []string{"old_value", "new_value"}) || h.NullableIf != "" {
		t.Errorf("history: nullable %v if %q, want old_value and new_value always", h.Nullable, h.NullableIf)
	}
	// Every array the schema knows is a known child, so a walk of Children finds them all.
	for name, e := range schema {
		for c := range e.arrays {
			if !slices.Contains(e.order, c) {
				t.Errorf("%s: array child %s is not in the child order", name, c)
			}
		}
	}
}
