package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccountsCheck runs `reqgate accounts check` on account files: a valid set reports its accounts, and a bad
// set reports every refusal of every file, each with its file and line, without a store.
func TestAccountsCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", crashAccounts)
	bad := write("bad.yaml", `accounts:
  - api_key: acme
    users:
      - {id: 1, username: alice, password: pw}
      - {id: 1, username: bob, password: pw}
      - {username: carol}
  - api_key: "no spaces"
`)
	worse := write("worse.yaml", "acounts: []\n")

	tests := []struct {
		name string
		args []string
		code int
		want []string // substrings of the output, in order
	}{
		{"valid", []string{"check", good}, 0, []string{good + ": ok, 1 account(s)"}},
		{"every refusal", []string{"check", good, bad, worse}, 1, []string{
			bad + `:6: user "carol": password is required`,
			bad + `:7: api_key "no spaces" may hold only`,
			worse + `:1: unknown key "acounts"`,
		}},
		{"after the decoding passed", []string{"check", write("dup.yaml", `accounts:
  - api_key: acme
    users:
      - {id: 1, username: alice, password: pw}
      - {id: 1, username: bob, password: pw}
      - {id: 2, username: alice, password: pw}
`)}, 1, []string{`:5: user id 1 is already used`, `:6: username "alice" is already used`}},
		// One run names every refusal of a file: those found when reading it and those of the rules across an
		// account's items (a user id used twice), in line order.
		{"every refusal of a file in one run", []string{"check", write("mixed.yaml", `accounts:
  - api_key: acme
    users:
      - {id: 1, username: alice, password: pw}
      - {id: 1, username: bob, password: pw}
  - api_key: beta
    users:
      - {username: carol, password: pw, email: carol}
`)}, 1, []string{`:5: user id 1 is already used`, `:8: email "carol" is not an email address`}},
		{"missing file", []string{"check", filepath.Join(dir, "missing.yaml"), good}, 1, []string{"missing.yaml: no such file"}},
		{"help", []string{"check", "--help"}, 0, []string{"Usage:", "reqgate accounts check FILE..."}},
		{"no file", []string{"check"}, 2, []string{"no FILE given"}},
		{"unknown option", []string{"check", "--fix", good}, 2, []string{`unknown option "--fix"`}},
		{"unknown subcommand", []string{"apply", good}, 2, []string{`unknown subcommand "apply"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runCmd(t, append([]string{"accounts"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\n%s", code, tt.code, out)
			}
			rest := out
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (after the ones before it):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
