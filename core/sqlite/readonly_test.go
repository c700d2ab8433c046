package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/sqlite"
)

// TestOpenReadOnly checks the source side of `reqgate store copy`: an existing store is read, never written;
// a path that is not a store is refused and nothing is created there.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	st := open(t, good)
	if err := st.Apply(ctx, accounts.Demo()); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	notStore := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notStore, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path string
		err        string // "" when it opens
	}{
		{"existing store", good, ""},
		{"missing file", filepath.Join(dir, "typo.db"), "no such file"},
		{"missing directory", filepath.Join(dir, "nodir", "core.db"), "no such file"},
		{"a directory", dir, "not a regular file"},
		{"not a database", notStore, "open sqlite store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := sqlite.OpenReadOnly(ctx, tt.path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("OpenReadOnly(%s) = %v, want an error containing %q", tt.path, err, tt.err)
				}
				for _, p := range []string{filepath.Join(dir, "typo.db"), filepath.Join(dir, "nodir")} {
					if _, err := os.Stat(p); !os.IsNotExist(err) {
						t.Errorf("%s exists after a refused open (%v)", p, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			keys, err := st.APIKeys(ctx)
			if err != nil || len(keys) != 1 || keys[0] != "demo" {
				t.Fatalf("APIKeys = %v, %v; want [demo]", keys, err)
			}
			if _, err := st.Export(ctx, "demo"); err != nil {
				t.Fatalf("Export: %v", err)
			}
			if err := st.Apply(ctx, accounts.Demo()); err == nil {
				t.Fatal("Apply on a read-only store succeeded")
			}
		})
	}
}
