package accounts

import (
	"os"
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
