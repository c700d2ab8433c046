package accounts

import (
	"errors"
	"os"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that every refusal is an *Error with a line.
func FuzzParse(f *testing.F) {
	for _, path := range []string{"testdata/contract.yaml", "demo.yaml"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(head))
	f.Add([]byte("accounts:\n  - api_key: a\n    name: b\n    records:\n      - {kind: re, id: 1, created_by: x, fields: {field_101: [1, *a]}}\n"))
	f.Add([]byte("accounts: &a [*a]\n"))
	f.Add([]byte("accounts:\n  - <<: {api_key: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		_, err := Parse("fuzz.yaml", data)
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
