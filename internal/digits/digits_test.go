package digits

import "testing"

func TestParse(t *testing.T) {
	cases := []struct {
		s      string
		maxLen int
		want   uint64
		ok     bool
	}{
		{"0", 1, 0, true},
		{"007", 3, 7, true},
		{"123", 3, 123, true},
		{"1234", 3, 0, false},                  // over the caller's bound
		{"18446744073709551615", 20, 0, false}, // 20 digits could overflow: never more than 19
		{"9999999999999999999", 19, 9999999999999999999, true},
		{"", 5, 0, false},
		{"-1", 5, 0, false},
		{"+1", 5, 0, false},
		{" 1", 5, 0, false},
		{"1 ", 5, 0, false},
		{"1_0", 5, 0, false},
		{"0x1", 5, 0, false},
		{"١", 5, 0, false}, // a digit of another script
	}
	for _, c := range cases {
		n, ok := Parse(c.s, c.maxLen)
		if n != c.want || ok != c.ok {
			t.Errorf("Parse(%q, %d) = %d, %v; want %d, %v", c.s, c.maxLen, n, ok, c.want, c.ok)
		}
		if nb, okb := Parse([]byte(c.s), c.maxLen); nb != n || okb != ok {
			t.Errorf("Parse([]byte(%q)) = %d, %v; the string gave %d, %v", c.s, nb, okb, n, ok)
		}
	}
}
