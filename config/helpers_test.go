package config

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFile writes a config file into a fresh temp dir and returns its path.
func writeFile(tb testing.TB, name, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatalf("write %s: %v", path, err)
	}
	return path
}

// mustLoad loads or fails the test.
func mustLoad(tb testing.TB, role string, args, environ []string) *Config {
	tb.Helper()
	c, err := Load(role, args, environ)
	if err != nil {
		tb.Fatalf("Load(%q, %q, %q): %v", role, args, environ, err)
	}
	return c
}
