package gateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"
	"time"
)

// credential is the Basic credential of a request, reduced to what the gateway keeps: the username and a
// keyed hash of api_key, username and password. The password itself is never stored.
type credential struct {
	present bool
	user    string
	digest  [32]byte
}

// maxCredentials bounds the verified-credential store; when full, expired entries go, then everything.
const maxCredentials = 100_000

// credentials remembers credentials the core accepted, for AuthTTL, under HMAC-SHA256 with a random
// per-process key. Only a remembered credential may read the cache; any other request goes to the core,
// which answers it (a 401 included) and, by answering 2xx, proves it.
type credentials struct {
	ttl  time.Duration // <= 0: nothing is remembered
	now  func() time.Time
	key  [32]byte
	macs sync.Pool
	mu   sync.RWMutex
	m    map[[32]byte]time.Time // digest -> expiry
}

func newCredentials(ttl time.Duration, now func() time.Time) *credentials {
	c := &credentials{ttl: ttl, now: now, m: make(map[[32]byte]time.Time)}
	_, _ = rand.Read(c.key[:])
	c.macs.New = func() any { return &macState{mac: hmac.New(sha256.New, c.key[:])} }
	return c
}

// macState is a pooled HMAC with a decode buffer, so parsing a credential allocates nothing but the user name.
type macState struct {
	mac hash.Hash
	buf [512]byte
}

// parse reads the Authorization header of a request for apiKey. A missing or malformed header gives a
// credential that is not present (the core answers it with 401).
func (c *credentials) parse(auth []byte, apiKey string) credential {
	const prefix = "basic "
	if len(auth) <= len(prefix) || !bytes.EqualFold(auth[:len(prefix)], []byte(prefix)) || len(auth) > 4096 {
		return credential{}
	}
	st := c.macs.Get().(*macState)
	defer c.macs.Put(st)
	enc := bytes.TrimSpace(auth[len(prefix):])
	dec := st.buf[:]
	if n := base64.StdEncoding.DecodedLen(len(enc)); n > len(dec) {
		dec = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(dec, enc)
	if err != nil {
		return credential{}
	}
	dec = dec[:n]
	defer clear(dec)
	i := bytes.IndexByte(dec, ':')
	if i < 0 {
		return credential{}
	}
	user, pass := dec[:i], dec[i+1:]
	m := st.mac
	m.Reset()
	var l [4]byte
	for _, part := range [][]byte{[]byte(apiKey), user, pass} {
		binary.BigEndian.PutUint32(l[:], uint32(len(part)))
		m.Write(l[:])
		m.Write(part)
	}
	cr := credential{present: true, user: string(user)}
	m.Sum(cr.digest[:0])
	return cr
}

// verified reports whether the core accepted this credential within the TTL before now.
func (c *credentials) verified(cr credential, now time.Time) bool {
	if !cr.present || c.ttl <= 0 {
		return false
	}
	c.mu.RLock()
	exp, ok := c.m[cr.digest]
	c.mu.RUnlock()
	return ok && now.Before(exp)
}

// remember records that the core accepted the credential.
func (c *credentials) remember(cr credential) {
	if !cr.present || c.ttl <= 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCredentials {
		for k, exp := range c.m {
			if !now.Before(exp) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCredentials {
			clear(c.m)
		}
	}
	c.m[cr.digest] = now.Add(c.ttl)
}

// forget drops a credential the core refused, so a changed password stops reading the cache at once.
func (c *credentials) forget(cr credential) {
	if !cr.present {
		return
	}
	c.mu.Lock()
	delete(c.m, cr.digest)
	c.mu.Unlock()
}

// maxFailureKeys bounds the failure counters; when full, expired windows go, then everything.
const maxFailureKeys = 200_000

// failures counts failed authentications per client IP and per username (of an api_key) in fixed windows,
// against brute force: once a key reaches its limit, further unverified attempts get 429 until the window
// ends. A credential that is already verified is never blocked, so an attacker cannot lock out a user who
// is working.
type failures struct {
	window         time.Duration
	maxUser, maxIP int
	now            func() time.Time
	mu             sync.Mutex
	m              map[string]*failureWindow
}

type failureWindow struct {
	start time.Time
	n     int
}

func newFailures(window time.Duration, maxUser, maxIP int, now func() time.Time) *failures {
	return &failures{window: window, maxUser: maxUser, maxIP: maxIP, now: now, m: make(map[string]*failureWindow)}
}

func userKey(apiKey, user string) string { return "u\x00" + apiKey + "\x00" + user }
func ipKey(ip string) string             { return "i\x00" + ip }

// blocked returns how long the IP or the user must wait, 0 when neither is blocked.
func (f *failures) blocked(ip, apiKey, user string) time.Duration {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	wait := f.waitLocked(ipKey(ip), f.maxIP, now)
	if user != "" {
		wait = max(wait, f.waitLocked(userKey(apiKey, user), f.maxUser, now))
	}
	return wait
}

func (f *failures) waitLocked(key string, limit int, now time.Time) time.Duration {
	w, ok := f.m[key]
	if !ok || w.n < limit {
		return 0
	}
	end := w.start.Add(f.window)
	if !now.Before(end) {
		return 0
	}
	return end.Sub(now)
}

// record counts one failed attempt of the IP and, when named, the user.
func (f *failures) record(ip, apiKey, user string) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) >= maxFailureKeys {
		for k, w := range f.m {
			if !now.Before(w.start.Add(f.window)) {
				delete(f.m, k)
			}
		}
		if len(f.m) >= maxFailureKeys {
			clear(f.m)
		}
	}
	f.bumpLocked(ipKey(ip), now)
	if user != "" {
		f.bumpLocked(userKey(apiKey, user), now)
	}
}

func (f *failures) bumpLocked(key string, now time.Time) {
	w, ok := f.m[key]
	if !ok || !now.Before(w.start.Add(f.window)) {
		f.m[key] = &failureWindow{start: now, n: 1}
		return
	}
	w.n++
}
