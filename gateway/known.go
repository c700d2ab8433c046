package gateway

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"sync"
	"time"

	"github.com/reqgate/reqgate/internal/ttlmap"
)

// Known addresses: where a user has logged in before. The failed-login limit of a user from all addresses
// together (failureLimits.maxUserAll) does not hold back a login from the network of one of the user's own
// earlier logins, so that guesses from elsewhere cannot lock the user out of her own account; the limits of
// the caller's own address (per address, per username and address) still hold there. Only a login the core
// proved records an address (verify.go), so a caller cannot make an address known by guessing.
//
// An address is remembered by its network, /24 for IPv4 and /64 for IPv6, as a home or office line's address
// moves within it. Neither the user nor the network is kept in clear: a user is remembered under a hash of the
// api_key and username, a network under a hash of those and the network.

// knownPerUser bounds the networks remembered per user: the oldest goes when a new one comes. One user with
// addresses to spare therefore fills only its own entry; the number of users bounds the rest.
const knownPerUser = 8

// knownUserKey and knownNet are the hashes a user and one of its networks are remembered under.
type (
	knownUserKey [16]byte
	knownNet     [16]byte
)

// knownKeys hashes a user and the network of ip. Each part is prefixed with its length, so that no two
// different users or networks share an input.
func knownKeys(ip, apiKey, user string) (knownUserKey, knownNet) {
	h := sha256.New()
	var n [4]byte
	for _, s := range []string{"reqgate known address", apiKey, user} {
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var u knownUserKey
	copy(u[:], h.Sum(nil))
	nw := knownNetwork(ip)
	binary.BigEndian.PutUint32(n[:], uint32(len(nw)))
	h.Write(n[:])
	h.Write([]byte(nw))
	var a knownNet
	copy(a[:], h.Sum(nil))
	return u, a
}

// knownNetwork is the network an address is remembered by: /24 for IPv4 (an IPv4-mapped IPv6 address too),
// /64 for IPv6; anything else (not an address) as it is.
func knownNetwork(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p.String()
}

// knownAddrs are the networks users logged in from, in the process, each for a TTL after the last login
// from it. Its memory is bounded: at most max users of knownPerUser networks each. A full store never drops a
// user whose networks are still remembered (ttlmap.Add): a newcomer is not remembered until room comes free,
// and logs in as a stranger meanwhile, as without this store.
type knownAddrs struct {
	ttl time.Duration
	mu  sync.Mutex // guards the sets
	m   *ttlmap.Map[knownUserKey, *knownSet]
}

// knownSet is one user's networks and when each stops being known.
type knownSet struct {
	n   int
	net [knownPerUser]knownNet
	exp [knownPerUser]time.Time
}

func newKnownAddrs(ttl time.Duration, max int) *knownAddrs {
	return &knownAddrs{ttl: ttl, m: ttlmap.New[knownUserKey, *knownSet](ttl, max)}
}

// has reports whether user of apiKey logged in from the network of ip within the TTL before now.
func (k *knownAddrs) has(ip, apiKey, user string, now time.Time) bool {
	if k.ttl <= 0 {
		return false
	}
	u, a := knownKeys(ip, apiKey, user)
	s, ok := k.m.Get(u, now)
	if !ok {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range s.n {
		if s.net[i] == a {
			return now.Before(s.exp[i])
		}
	}
	return false
}

// record remembers that user of apiKey logged in from ip at now. Call it only for a login the core proved.
func (k *knownAddrs) record(ip, apiKey, user string, now time.Time) {
	if k.ttl <= 0 {
		return
	}
	u, a := knownKeys(ip, apiKey, user)
	exp := now.Add(k.ttl)
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.m.Get(u, now)
	if !ok {
		s = &knownSet{}
	}
	s.add(a, exp)
	k.m.Add(u, s, now) // renews the user's entry; a full store keeps those it holds and takes no newcomer
}

// add sets nw's expiry to exp, in place of the network that expires first when the set is full.
func (s *knownSet) add(nw knownNet, exp time.Time) {
	at := -1
	for i := range s.n {
		if s.net[i] == nw {
			at = i
			break
		}
	}
	switch {
	case at >= 0:
	case s.n < knownPerUser:
		at = s.n
		s.n++
	default:
		at = 0
		for i := 1; i < s.n; i++ {
			if s.exp[i].Before(s.exp[at]) {
				at = i
			}
		}
	}
	s.net[at], s.exp[at] = nw, exp
}

// hexKnown is the text of a hash, for Redis.
func hexKnown(b []byte) string { return hex.EncodeToString(b) }
