//go:build race

// Package race tells tests whether they run under the race detector, under which sync.Pool drops items at
// random (so pooled state is made again) and allocation counts mean nothing.
package race

// Enabled is true under the race detector.
const Enabled = true
