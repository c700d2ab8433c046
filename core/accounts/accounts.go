package accounts

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reqgate/reqgate/core"
)

// Parse reads one account file; name is what errors call it (usually its path). The result is checked whole
// and its passwords are hashed: Store.Apply can write it as is. A refusal is an *Error ("name:line: reason").
func Parse(name string, data []byte) (*core.Provision, error) {
	return parseAll([]source{{name, data}})
}

// LoadFiles reads and parses several account files as one: accounts that share an api_key across files (or
// within one) are merged, and every rule then applies to the merged account (see the package comment). A path
// given twice is read once.
func LoadFiles(paths ...string) (*core.Provision, error) {
	srcs, err := readFiles(paths)
	if err != nil {
		return nil, err
	}
	return parseAll(srcs)
}

// CheckFiles reads and checks account files as LoadFiles does, and reports the number of accounts they hold
// (merged by api_key) or every refusal, but hashes no password: it needs no store and is quick, for
// `reqgate accounts check` before a deploy.
func CheckFiles(paths ...string) (int, error) {
	srcs, err := readFiles(paths)
	if err != nil {
		return 0, err
	}
	accts, err := check(srcs)
	return len(accts), err
}

// readFiles reads every path, each once, and reports every file it cannot read.
func readFiles(paths []string) ([]source, error) {
	srcs := make([]source, 0, len(paths))
	seen := map[string]bool{}
	errs := &errList{}
	for _, p := range paths {
		// The same file named twice (e.g. by flag and environment) is read once, not merged with itself.
		key := filepath.Clean(p)
		if seen[key] {
			continue
		}
		seen[key] = true
		data, err := readFile(p)
		if err != nil {
			errs.add(err)
			continue
		}
		srcs = append(srcs, source{p, data})
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("load account files: no file given")
	}
	return srcs, nil
}

type source struct {
	name string
	data []byte
}

// readFile reads at most MaxFileBytes (+1, to notice a larger file).
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read account file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read account file %s: %w", path, err)
	}
	return data, nil
}

// parseAll decodes every source, merges accounts by api_key, checks them and hashes the passwords (last,
// because it is the slow part and a refused file should be refused quickly).
func parseAll(srcs []source) (*core.Provision, error) {
	accts, err := check(srcs)
	if err != nil {
		return nil, err
	}
	if err := hashPasswords(accts); err != nil {
		return nil, err
	}
	p := &core.Provision{Accounts: make([]core.AccountSpec, len(accts))}
	for i, a := range accts {
		p.Accounts[i] = a.spec
	}
	return p, nil
}

// check is parseAll without hashing. It reports every refusal it finds (at most MaxErrors), in three rounds:
// decoding every file, merging the accounts by api_key, and the rules of each merged account (uniqueness,
// references), which run on every account none of whose entries was refused: the rules of an account with an
// item left out would report the item's absence (a record's created_by naming a user refused for her
// password). When a file is refused as a whole, which accounts it gives is unknown, so the third round waits
// for it.
func check(srcs []source) ([]*account, error) {
	errs := &errList{}
	refused := map[string]bool{} // api_keys of accounts with a refused entry or item
	names := make([]string, len(srcs))
	for i, s := range srcs {
		names[i] = s.name
	}
	refusals := func() ([]*account, error) {
		errs.sort(names)
		return nil, errs.err()
	}
	var raws []*rawAccount
	filesOK := true
	for _, s := range srcs {
		if errs.stop() {
			break
		}
		accts, ok := decodeFile(s.name, s.data, errs, refused)
		raws, filesOK = append(raws, accts...), filesOK && ok
	}
	if errs.stop() {
		return refusals()
	}
	merged := merge(raws, errs, refused)
	if !filesOK || errs.stop() {
		return refusals()
	}
	accts := make([]*account, 0, len(merged))
	for _, raw := range merged {
		if errs.stop() {
			break
		}
		if !refused[raw.apiKey] {
			accts = append(accts, build(raw, errs))
		}
	}
	if errs.len() > 0 {
		return refusals()
	}
	return accts, nil
}
