//go:build race

package credkey

func init() { raceEnabled = true }
