package gateway

import (
	"net/netip"
	"sync"
)

// bodyShares bounds the bytes of request bodies that one account, and one client address, hold at once: each
// at most a share of the body budget. A body reserves what it announces before it arrives, so without shares a
// single user announcing large bodies and sending them slowly would spend the budget every other tenant needs.
// A user's bodies count towards its account's share, so no user holds more than its account may. Only writes
// with a body reach it, never a read.
type bodyShares struct {
	max      int64 // bytes one key may hold
	mu       sync.Mutex
	accounts map[string]int64 // keys are route strings, which are never reused for other bytes
	addrs    map[netip.Addr]int64
}

func newBodyShares(budget int64, share float64, maxBody int) *bodyShares {
	return &bodyShares{max: max(int64(float64(budget)*share), int64(maxBody)),
		accounts: make(map[string]int64), addrs: make(map[netip.Addr]int64)}
}

// What a refusal blames, the label of reqgate_gateway_body_share_refused_total.
const (
	shareAccount = "account"
	shareAddress = "address"
)

// take reserves n bytes for account and addr (an invalid addr is not counted), or returns the key whose share
// they do not fit in.
func (s *bodyShares) take(account string, addr netip.Addr, n int64) (refused string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.accounts[account]+n > s.max {
		bodyShareRefusedAccount.Inc()
		return shareAccount
	}
	if addr.IsValid() && s.addrs[addr]+n > s.max {
		bodyShareRefusedAddress.Inc()
		return shareAddress
	}
	s.accounts[account] += n
	if addr.IsValid() {
		s.addrs[addr] += n
	}
	return ""
}

// give returns n bytes taken for account and addr. Keys holding nothing are dropped: the maps hold only the
// bodies in flight.
func (s *bodyShares) give(account string, addr netip.Addr, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.accounts[account] - n; v > 0 {
		s.accounts[account] = v
	} else {
		delete(s.accounts, account)
	}
	if !addr.IsValid() {
		return
	}
	if v := s.addrs[addr] - n; v > 0 {
		s.addrs[addr] = v
	} else {
		delete(s.addrs, addr)
	}
}
