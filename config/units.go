package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeUnits are the suffixes a size accepts, largest first so formatSize picks the biggest exact one.
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"TiB", 1 << 40},
	{"GiB", 1 << 30},
	{"MiB", 1 << 20},
	{"KiB", 1 << 10},
	{"B", 1},
}

// parseSize reads "256MiB", "1 GiB", "512KiB", "1048576" or "1048576B".
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty size")
	}
	factor := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			factor = u.factor
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q: want a whole number of bytes, KiB, MiB, GiB or TiB", s)
	}
	if n > math.MaxInt64/factor {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return n * factor, nil
}

// formatSize writes n with the largest unit that divides it exactly.
func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n != 0 && n%u.factor == 0 && u.factor > 1 {
			return strconv.FormatInt(n/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// parseDuration reads a Go duration ("250ms", "10s", "1h30m"); a bare "0" is zero.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("bad duration %q: want a Go duration such as 250ms, 10s or 5m", s)
	}
	return d, nil
}

// formatDuration writes d as time.Duration does, without the zero tails: 5m instead of 5m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// parseInt reads a decimal int.
func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("bad integer %q", s)
	}
	return n, nil
}

// parseFloat reads a decimal number (a ratio).
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return f, nil
}

// parseBool reads true/false (and the other forms strconv accepts, plus yes/no and on/off).
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1", "t":
		return true, nil
	case "false", "no", "off", "0", "f":
		return false, nil
	}
	return false, fmt.Errorf("bad boolean %q: want true or false", s)
}
