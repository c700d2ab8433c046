package translate

import "testing"

func TestSchema(t *testing.T) {
	arrays := []struct{ grandparent, parent, child string }{
		{"requirement", "fields", "field"}, {"", "users", "user"}, {"", "views", "view"}, {"", "objects", "object"},
		{"field", "picklist_options", "option"}, {"", "history_items", "history"}, {"field", "value", "value"},
		{"history", "old_value", "value"}, {"history", "new_value", "value"}, {"", "view", "requirement"},
		{"", "view", "custom_object"}, {"", "search_results", "use_case"}, {"relationships", "requirements", "requirement"},
		{"relationships", "features", "feature"}, {"relationships", "use_cases", "use_case"},
		{"relationships", "custom_objects", "custom_object"},
	}
	for _, a := range arrays {
		if lookup(a.grandparent, a.parent).arrays[a.child] == 0 {
			t.Errorf("%q in %q (in %q) is not an array, want one", a.child, a.parent, a.grandparent)
		}
	}
	for _, a := range []struct{ grandparent, parent, child string }{
		{"", "requirement", "fields"}, {"", "user", "email"}, {"fields", "field", "value"}, {"", "x", "y"},
	} {
		if lookup(a.grandparent, a.parent).arrays[a.child] != 0 {
			t.Errorf("%q in %q (in %q) is an array, want none", a.child, a.parent, a.grandparent)
		}
	}
	ints := []struct {
		parent, name string
		want         bool
	}{
		{"requirement", "id", true}, {"user", "user_id", true}, {"view", "view_id", true}, {"field", "sort", true},
		{"history", "activity_time", true}, {"error", "try_again_after", true}, {"option", "value", true},
		{"field", "value", false}, {"value", "value", false}, {"old_value", "month", false}, {"field", "name", false},
		{"user", "email", false}, {"x", "unknown", false},
	}
	for _, tt := range ints {
		if got := lookup(tt.parent, tt.name).integer; got != tt.want {
			t.Errorf("integer of %q in %q = %v, want %v", tt.parent, tt.name, got, tt.want)
		}
	}
	if !IsContainer("", "relationships") || IsContainer("field", "value") || IsContainer("object", "custom_object") ||
		!IsContainer("view", "custom_object") {
		t.Error("IsContainer disagrees with the interface")
	}
	if got, want := lookup("", "user").order, []string{"user_id", "email", "username", "firstname", "lastname", "deleted",
		"status"}; len(got) != len(want) || got[0] != want[0] || got[6] != want[6] {
		t.Errorf("order of user = %q, want %q", got, want)
	}
}

// TestInternAgreesWithLookup checks the reader's one-lookup path against lookup for every name and parent.
func TestInternAgreesWithLookup(t *testing.T) {
	parents := []string{""}
	for name := range schema {
		parents = append(parents, name)
	}
	for name := range interned {
		for _, p := range parents {
			got, info := internElem([]byte(name), p)
			if got != name || info != lookup(p, name) {
				t.Fatalf("internElem(%q, %q) disagrees with lookup", name, p)
			}
		}
	}
	if _, info := internElem([]byte("not_in_the_interface"), "user"); info != noInfo {
		t.Error("unknown name: want noInfo")
	}
}
