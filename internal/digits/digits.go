// Package digits reads the unsigned decimal numbers of reqgate's wire: record ids in paths, the
// Reqgate-Timeout budget, numeric ids the cache spreads over its slots. They are written as digits only (no
// sign, no space, no underscore, no base prefix), which strconv would accept or reject by other rules, and read
// on hot paths where strconv's error allocates. Each caller bounds the length so that no value can overflow.
package digits

// Parse reads s as 1 to maxLen ASCII digits, maxLen at most 19 (so that the value fits a uint64); anything else
// is not ok. Leading zeros are allowed: a caller that gives a number one spelling refuses them itself.
func Parse[T ~string | ~[]byte](s T, maxLen int) (n uint64, ok bool) {
	if len(s) == 0 || len(s) > min(maxLen, 19) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}
