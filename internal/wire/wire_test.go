package wire

import (
	"strings"
	"testing"
)

func TestValidAPIKey(t *testing.T) {
	for key, want := range map[string]bool{
		"acme": true, "Acme-2_b": true, strings.Repeat("k", 128): true,
		"": false, "no.such": false, "a b": false, "ä": false, "a/b": false, strings.Repeat("k", 129): false,
	} {
		if got := ValidAPIKey(key); got != want {
			t.Errorf("ValidAPIKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestStrongETag(t *testing.T) {
	for tag, want := range map[string]bool{
		`"abc"`: true, `""`: true, `"a-json-gzip"`: true,
		`W/"abc"`: false, `abc`: false, `"a"b"`: false, `"a b"`: false, `"`: false, "\"a\x7f\"": false,
	} {
		if got := StrongETag(tag); got != want {
			t.Errorf("StrongETag(%q) = %v, want %v", tag, got, want)
		}
	}
}
