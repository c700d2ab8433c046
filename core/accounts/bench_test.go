package accounts

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// BenchmarkCheckDemo measures parsing and checking the demo file without hashing (the part that scales with
// the file's size).
func BenchmarkCheckDemo(b *testing.B) {
	for b.Loop() {
		if _, err := check([]source{{"demo.yaml", demoYAML}}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(demoYAML)))
}

// BenchmarkParseContract measures a whole Parse of the contract's example at the test cost (bcrypt.MinCost).
func BenchmarkParseContract(b *testing.B) {
	data, err := os.ReadFile("testdata/contract.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("contract.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseDemoDefaultCost measures what `reqgate serve` pays on an empty store: the demo's four users
// hashed at bcrypt.DefaultCost on all CPUs.
func BenchmarkParseDemoDefaultCost(b *testing.B) {
	old := BcryptCost
	BcryptCost = bcrypt.DefaultCost
	defer func() { BcryptCost = old }()
	for b.Loop() {
		if _, err := Parse("demo.yaml", demoYAML); err != nil {
			b.Fatal(err)
		}
	}
}

// largeFile is an account with users users and records requirements, each with a title, a status, an owner
// and tags.
func largeFile(users, records int) []byte {
	var b strings.Builder
	b.WriteString("accounts:\n  - api_key: big\n    name: Big\n    users:\n")
	for i := 1; i <= users; i++ {
		fmt.Fprintf(&b, "      - {id: %d, username: u%d, password: p%d, email: u%d@big.test}\n", i, i, i, i)
	}
	b.WriteString("    records:\n")
	for i := 1; i <= records; i++ {
		fmt.Fprintf(&b, "      - {kind: re, id: %d, created_by: u%d, fields: {field_101: Requirement number %d, field_103: %d, field_104: %d, field_106: [1, %d]}}\n",
			i, i%users+1, i, i%3+1, i%users+1, i%4+1)
	}
	return []byte(b.String())
}

// BenchmarkCheckLarge measures parsing and checking (no hashing) of 10,000 seed records and 100 users.
func BenchmarkCheckLarge(b *testing.B) {
	data := largeFile(100, 10_000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := check([]source{{"large.yaml", data}}); err != nil {
			b.Fatal(err)
		}
	}
}
