package translate

import "testing"

// The name classes at the edges of the ranges of XML 1.0 (fifth edition), productions NameStartChar and
// NameChar.
func TestNameLen(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"Zz_:", 4},
		{"record id", 6},
		{"a-b.c9>", 6},
		{"9a", 0},
		{"-a", 0},
		{".a", 0},
		{"é", 2},             // U+00E9, in [#xD8-#xF6]
		{"\u00d7", 0},        // multiplication sign, between two start ranges
		{"x\u00d7", 1},       // nor a name character
		{"\u00b7", 0},        // middle dot: a name character only
		{"x\u00b7", 3},       //
		{"\u0300", 0},        // combining grave accent: a name character only
		{"x\u0300\u036f", 5}, //
		{"\u037e", 0},        // Greek question mark, between [#x370-#x37D] and [#x37F-#x1FFF]
		{"\u037f\u037d", 4},  //
		{"\u203f", 0},        // undertie: a name character only
		{"x\u2040", 4},       //
		{"\u200c", 3},        // zero width non-joiner
		{"\u3000", 0},        // ideographic space, before [#x3001-#xD7FF]
		{"\u3001\ud7ff", 6},  //
		{"\ufdd0", 0},        // a noncharacter, between [#xF900-#xFDCF] and [#xFDF0-#xFFFD]
		{"\U00010000", 4},    //
		{"x\U000effff", 5},   //
		{"\U000f0000", 0},    // beyond [#x10000-#xEFFFF]
		{"\ufffd", 0},        // a name character, but what invalid UTF-8 decodes to
		{"a\xffb", 1},        // invalid UTF-8 ends a name
		{"\xc3", 0},          // a cut character
		{"ab\xe2\x82", 2},    //
		{"日本語 x", 9},         //
	}
	for _, tt := range tests {
		if got := nameLen([]byte(tt.in)); got != tt.want {
			t.Errorf("nameLen(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
