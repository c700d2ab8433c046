package accounts

import (
	"errors"
	"testing"
)

// compact touches every part of the format in few bytes.
const compact = `accounts:
- api_key: a
  name: A
  users:
  - {id: 1, username: u, password: p, email: u@a}
  - {username: v, password: p}
  fields:
    re:
    - {id: 1, label: T, type: Textbox, special_purpose: title, required: true}
    - {id: 2, label: S, type: Picklist-Pick One, special_purpose: status, options: [{value: 1, label: x, default: true}, {value: 2, label: y}]}
    - {id: 3, label: O, type: Picklist-Pick Multiple, list_type: user}
    - {id: 4, label: D, type: Date, default_value: 2025-01-02}
  custom_objects:
  - {api_prefix: r, name_singular: R, id_prefix: R, fields: [{id: 9, label: C, type: Checkbox}]}
  views:
  - {id: 1, kind: re, name: V, created_by: u, conditions: "field_2=1&created_time>1700000005"}
  records:
  - {kind: re, id: 1, created_by: v, fields: {field_1: t, field_2: 2, field_3: [u, 1], field_4: 2025-01-02}}
  - {kind: r, id: 2, created_by: u, fields: {field_9: true}}
  relationships:
  - {from: RE-1, to: R-2, type: parent}
`

// FuzzParse checks that no input makes Parse panic, and that every refusal is an *Error with a line. It runs
// Parse without the bcrypt step (check): hashing is slow on purpose and depends on no input but the password,
// whose length check happens before it; skipping it lets the fuzzer (and its minimizer) run thousands of
// inputs a second instead of a few.
func FuzzParse(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input it finds, and that costs time per byte.
	f.Add([]byte(compact))
	f.Add([]byte(head))
	f.Add([]byte("accounts:\n  - api_key: a\n    name: b\n    records:\n      - {kind: re, id: 1, created_by: x, fields: {field_101: [1, *a]}}\n"))
	f.Add([]byte("accounts: &a [*a]\n"))
	f.Add([]byte("accounts:\n  - <<: {api_key: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		_, err := check([]source{{"fuzz.yaml", data}})
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Parse() error %v (%T) is not an *Error", err, err)
		}
		if e.Line < 1 || e.Reason == "" {
			t.Fatalf("refusal without line or reason: %v", err)
		}
	})
}

func TestCompactSeedParses(t *testing.T) {
	if _, err := Parse("compact.yaml", []byte(compact)); err != nil {
		t.Fatal(err)
	}
}
