package budget

import (
	"errors"
	"testing"
	"time"
)

func TestAppendParse(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{27 * time.Second, "27000"},
		{1500*time.Microsecond + 999*time.Microsecond, "2"}, // rounded down: never more than the gateway waits
		{999 * time.Microsecond, "0"},                       // spent
		{-time.Second, "0"},
		{1000 * time.Hour, "999999999"}, // capped
	}
	for _, c := range cases {
		got := string(Append(nil, c.d))
		if got != c.want {
			t.Errorf("Append(%v) = %q, want %q", c.d, got, c.want)
			continue
		}
		back, err := Parse(got)
		if err != nil || back > max(c.d, 0) {
			t.Errorf("Parse(%q) = %v, %v: want at most %v", got, back, err, c.d)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, v := range []string{"", "-1", "+5", "1.5", "1e3", " 5", "5 ", "1s", "0x10", "1000000000"} {
		if d, err := Parse(v); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %v, %v: want ErrMalformed", v, d, err)
		}
	}
}
