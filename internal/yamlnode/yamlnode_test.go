package yamlnode

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in string
		wantKind string // "" = nil root
		want     Error  // zero = no error
	}{
		{"empty", "", "", Error{}},
		{"comment only", "# nothing\n", "", Error{}},
		{"mapping", "a: 1\n", "mapping", Error{}},
		{"syntax", "a: 1\n b: [\n", "", Error{Line: 2, Reason: "mapping values are not allowed in this context"}},
		{"second document", "a: 1\n---\nb: 2\n", "", Error{Line: 2, Second: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := Decode([]byte(tt.in))
			var got Error
			if ye := (*Error)(nil); errors.As(err, &ye) {
				got = *ye
			} else if err != nil {
				t.Fatalf("Decode: %v is not an *Error", err)
			}
			if got.Second != tt.want.Second || got.Line != tt.want.Line || (tt.want.Reason != "" && got.Reason != tt.want.Reason) {
				t.Errorf("Decode error = %+v, want %+v", got, tt.want)
			}
			kind := ""
			if root != nil {
				kind = map[bool]string{true: "mapping", false: "other"}[root.Tag == "!!map"]
			}
			if kind != tt.wantKind {
				t.Errorf("root = %q, want %q", kind, tt.wantKind)
			}
		})
	}
}

func TestPairs(t *testing.T) {
	root, err := Decode([]byte("a: &x 1\nb: 2\na: 3\n<<: {c: 4}\n? [d]\n: 5\ne: *x\n"))
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := Pairs(root, ResolveAny)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key     string
		line    int
		problem Problem
	}{
		{"a", 1, 0}, {"b", 2, 0}, {"a", 3, Duplicate}, {"<<", 4, Merge}, {"", 5, NotPlain}, {"e", 7, 0},
	}
	if len(pairs) != len(want) {
		t.Fatalf("%d pairs, want %d", len(pairs), len(want))
	}
	for i, w := range want {
		p := pairs[i]
		if p.Problem != w.problem || p.Raw.Line != w.line || (w.problem != NotPlain && p.Key.Value != w.key) {
			t.Errorf("pair %d: %+v, want %+v", i, p, w)
		}
	}
	if pairs[2].First.Line != 1 {
		t.Errorf("duplicate's first at line %d, want 1", pairs[2].First.Line)
	}
	if v, ok := Resolve(pairs[5].Value); !ok || v.Value != "1" {
		t.Errorf("alias resolved to %+v, %v", v, ok)
	}
}

func TestKindName(t *testing.T) {
	root, err := Decode([]byte("m: {a: 1}\nl: [1]\ns: x\nn:\nt: ~\n"))
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := Pairs(root, ResolveAny)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"m": "a mapping", "l": "a list", "s": "a single value", "n": "empty", "t": "empty"}
	for _, p := range pairs {
		if got := KindName(p.Value); got != want[p.Key.Value] {
			t.Errorf("KindName(%s) = %q, want %q", p.Key.Value, got, want[p.Key.Value])
		}
	}
	if got := KindName(&yaml.Node{Kind: yaml.AliasNode}); got != "a broken alias" {
		t.Errorf("KindName(alias to nothing) = %q", got)
	}
}
