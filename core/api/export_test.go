package api

import "sync/atomic"

// CountComparisons makes s count into n the bcrypt comparisons it runs to accept a credential.
func CountComparisons(s *Server, n *atomic.Int64) {
	compare := s.auth.compare
	s.auth.compare = func(hash, password []byte) error {
		n.Add(1)
		return compare(hash, password)
	}
}
