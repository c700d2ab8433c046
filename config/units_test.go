package config

import (
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1048576", 1 << 20, true},
		{"512B", 512, true},
		{"64KiB", 64 << 10, true},
		{"256MiB", 256 << 20, true},
		{"1 GiB", 1 << 30, true},
		{"2TiB", 2 << 40, true},
		{"10MB", 0, false},
		{"1.5GiB", 0, false},
		{"-1", 0, false},
		{"", 0, false},
		{"MiB", 0, false},
		{"9999999999TiB", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestFormat(t *testing.T) {
	sizes := map[int64]string{0: "0", 1: "1", 1000: "1000", 1024: "1KiB", 1 << 20: "1MiB", 3 << 30: "3GiB", 1<<20 + 1: "1048577"}
	for in, want := range sizes {
		if got := formatSize(in); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", in, got, want)
		}
	}
	durations := map[time.Duration]string{0: "0s", 250 * time.Millisecond: "250ms", 5 * time.Minute: "5m", time.Hour: "1h",
		90 * time.Minute: "1h30m", 61 * time.Second: "1m1s", time.Hour + time.Second: "1h0m1s"}
	for in, want := range durations {
		if got := formatDuration(in); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", in, got, want)
		}
		if back, err := parseDuration(want); err != nil || back != in {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", want, back, err, in)
		}
	}
}
