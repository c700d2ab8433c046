package gateway

import (
	"bytes"
	"encoding/base64"
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/internal/credkey"
	"github.com/reqgate/reqgate/internal/ttlmap"
	"github.com/reqgate/reqgate/internal/wire"
)

// credential is the Basic credential of a request, reduced to what the gateway keeps: the username and a
// keyed hash of api_key, username and password (package credkey). The password itself is never stored.
type credential struct {
	present bool
	user    string
	apiKey  string
	digest  [credkey.Size]byte
	refresh bool // proved more than half the TTL ago: re-verify it ahead of its expiry (refreshAhead)
}

// maxCredentials bounds the verified-credential store; when full, expired entries go, then everything.
const maxCredentials = 100_000

// credentials remembers credentials the core proved (its Reqgate-Authenticated answer, see proof.go), for
// AuthTTL, under their credkey digest. Only a proved credential may read the cache or be charged to an
// account's rate policies; any other one is first checked with the core (verify.go).
type credentials struct {
	now  func() time.Time
	keys *credkey.Hasher
	bufs sync.Pool // *[512]byte: decoded headers, so parsing a credential allocates nothing but the user name
	// proved maps the digest of a proved credential to its user name (kept, so a verified request's
	// credential costs no allocation) and account (for a purge). With a TTL <= 0 nothing is remembered.
	proved *ttlmap.Map[[credkey.Size]byte, proved]
	ttl    time.Duration
	// gen changes after every change to proved: a connection's memo of a proof (checkOn) stands while gen is
	// what it was when the memo was taken, so a repeated credential is not looked up behind proved's lock.
	gen atomic.Uint64
}

// proved is a remembered credential's user name and account, and when the core last proved it.
type proved struct {
	user, apiKey string
	at           time.Time
}

func newCredentials(ttl time.Duration, now func() time.Time) *credentials {
	c := &credentials{now: now, keys: credkey.New(), ttl: ttl,
		proved: ttlmap.New[[credkey.Size]byte, proved](ttl, maxCredentials)}
	c.bufs.New = func() any { return new([512]byte) }
	return c
}

// check reads the Authorization header of a request for apiKey and reports whether the core proved that
// credential within the TTL before now. A missing or malformed header gives a credential that is not present
// (the core answers it with 401).
func (c *credentials) check(auth []byte, apiKey string, now time.Time) (cr credential, verified bool) {
	const prefix = "basic "
	if len(auth) <= len(prefix) || !bytes.EqualFold(auth[:len(prefix)], []byte(prefix)) || len(auth) > 4096 {
		return credential{}, false
	}
	buf := c.bufs.Get().(*[512]byte)
	defer c.bufs.Put(buf)
	enc := bytes.TrimSpace(auth[len(prefix):])
	dec := buf[:]
	if n := base64.StdEncoding.DecodedLen(len(enc)); n > len(dec) {
		dec = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(dec, enc)
	if err != nil {
		return credential{}, false
	}
	dec = dec[:n]
	defer clear(dec)
	i := bytes.IndexByte(dec, ':')
	if i < 0 {
		return credential{}, false
	}
	user, pass := dec[:i], dec[i+1:]
	cr.present, cr.apiKey = true, apiKey
	cr.digest = c.keys.SumBytes(apiKey, user, pass)
	if user, ok, due := c.lookup(cr.digest, now); ok {
		cr.user, cr.refresh = user, due
		return cr, true
	}
	cr.user = string(user)
	return cr, false
}

// lookup returns the user name of a credential the core proved within the TTL before now, and whether that
// proof is more than half the TTL old.
func (c *credentials) lookup(digest [credkey.Size]byte, now time.Time) (user string, ok, due bool) {
	p, ok := c.proved.Get(digest, now)
	return p.user, ok, ok && now.Sub(p.at) >= c.ttl/2
}

// checkOn is check with the memo of the connection the request came on (when it came through Serve). The
// memo holds the credential and its proof as last looked up: while no proof has changed since (gen), the
// proof's expiry is the memo's to judge, without the map. cn may be nil (no memo).
func (c *credentials) checkOn(cn *conn, auth []byte, apiKey string, now time.Time) (credential, bool) {
	if cn == nil {
		return c.check(auth, apiKey, now)
	}
	m := &cn.auth
	gen := c.gen.Load() // before the lookup: a change after it makes the next request look again
	if m.cred.present && m.apiKey == apiKey && bytes.Equal(m.raw, auth) {
		cr := m.cred
		if m.from == c && m.gen == gen && m.provedOK {
			verified := now.Before(m.provedAt.Add(c.ttl))
			cr.refresh = verified && now.Sub(m.provedAt) >= c.ttl/2
			return cr, verified
		}
		p, verified := c.proved.Get(cr.digest, now)
		cr.refresh = verified && now.Sub(p.at) >= c.ttl/2
		m.from, m.gen, m.provedOK, m.provedAt = c, gen, verified, p.at
		return cr, verified
	}
	cr, verified := c.check(auth, apiKey, now)
	if cr.present {
		m.raw, m.apiKey, m.cred = append(m.raw[:0], auth...), apiKey, cr
		m.from, m.provedOK = nil, false // the proof is looked up (and memoised) on the next request
	}
	return cr, verified
}

// remember records that the core proved the credential.
func (c *credentials) remember(cr credential) {
	if !cr.present {
		return
	}
	now := c.now()
	c.proved.Set(cr.digest, proved{user: cr.user, apiKey: cr.apiKey, at: now}, now)
	c.gen.Add(1)
}

// renew records a new proof of a credential still remembered; one forgotten meanwhile (a purge, a 401) stays
// forgotten.
func (c *credentials) renew(cr credential) {
	now := c.now()
	c.proved.Renew(cr.digest, proved{user: cr.user, apiKey: cr.apiKey, at: now}, now)
	c.gen.Add(1)
}

// coreAnswered records the status the core gave the caller's own request. A 401 to a credential the gateway had
// proved (its password changed, or its user was locked, since) makes the gateway forget the credential at once.
func (g *Gateway) coreAnswered(x *exchange, status int) {
	x.coreStatus = status
	if status == fasthttp.StatusUnauthorized && x.verified {
		g.creds.forget(x.cred)
	}
}

// forgetAccount drops every remembered credential of an account.
func (c *credentials) forgetAccount(apiKey string) {
	c.proved.DeleteFunc(func(_ [credkey.Size]byte, p proved) bool { return p.apiKey == apiKey })
	c.gen.Add(1)
}

// forget drops a credential the core refused, so a changed password stops reading the cache at once.
func (c *credentials) forget(cr credential) {
	if !cr.present {
		return
	}
	c.proved.Delete(cr.digest)
	c.gen.Add(1)
}

// failureLimits are the failed logins allowed within one window: per username from one client IP (the
// guesses of one attacker at one user), per client IP (one attacker at many users) and per username from all
// IPs together (a distributed guess at one user). The first two refuse further attempts until the window ends.
// The last is far higher than the first, and refuses nobody: past it, an attempt from a network the user
// logged in from before (known.go) goes on as usual, and any other one is slowed (stranger.go), so that many
// addresses together can neither lock a user out nor guess at the rate they could below it.
type failureLimits struct {
	window                       time.Duration
	maxUserIP, maxIP, maxUserAll int
}

// failures counts failed logins in fixed windows, against brute force. An attempt is reserved before the core
// checks it, in one locked step with the check of the limits, so that concurrent guesses cannot all pass a
// limit that each of them reads as not yet reached; an attempt that turns out not to be a failure is released.
// A credential that is already verified is never checked, so an attacker cannot lock out a user who is working.
//
// The counters are bounded (an attacker makes up their keys), but a counter whose window is open is never
// dropped to make room, or an attacker could reset the counts of everyone by filling the store. A counter
// that finds no room is counted instead in a fixed table of coarse counters (overflow), one per kind of limit,
// each shared by the keys that hash to it: while the store is full, a new key's attempts add up with those of
// the keys that share its slot, so a limit is reached sooner, never later.
type failures struct {
	failureLimits
	now  func() time.Time
	mu   sync.Mutex                          // makes reserve and release one step each
	m    *ttlmap.Map[string, *failureWindow] // a window is forgotten when it ends
	seed maphash.Seed
	over [3][overflowSlots]failureWindow // by kind of limit (failureLimits.limits), then slot
	// known are the networks users logged in from, exempt from the limit of all addresses together.
	known *knownAddrs
}

// userAll is the index of the per-username limit of all addresses together in failureLimits.limits.
const userAll = 2

// reservation is what reserve decided of an attempt.
type reservation struct {
	// wait > 0: a limit of the caller's own address is reached; nothing was counted, and the caller must wait
	// this long.
	wait time.Duration
	// excess > 0: the attempt was counted, but the user's count from all addresses had reached its limit and
	// the caller's network is not one the user logged in from: this is the excess-th such attempt in the
	// window, which ends after left.
	excess int
	left   time.Duration
}

// overflowSlots is the number of coarse counters per kind of limit.
const overflowSlots = 8192

// failureWindow is one counter: the window's start, and the attempts counted in it (changed under
// failures.mu).
type failureWindow struct {
	start time.Time
	n     int
}

func newFailures(l failureLimits, maxKeys int, now func() time.Time) *failures {
	return &failures{failureLimits: l, now: now, seed: maphash.MakeSeed(),
		m: ttlmap.New[string, *failureWindow](l.window, maxKeys), known: newKnownAddrs(0, 0)}
}

// failureKeys are the counters of one attempt, in the order of failureLimits.limits; an empty key is not
// counted. An IPv6 client is counted by its /64 (one host usually holds a whole /64, so its addresses are
// one attacker's). An api_key that cannot name an account (wire.ValidAPIKey) has no users whose guesses
// could be counted: such an attempt counts against its address only, so made-up accounts cost no counters.
func failureKeys(ip, apiKey, user string) [3]string {
	ip = failureAddr(ip)
	if !wire.ValidAPIKey(apiKey) {
		return [3]string{"", "i\x00" + ip, ""}
	}
	return [3]string{
		"ui\x00" + apiKey + "\x00" + user + "\x00" + ip,
		"i\x00" + ip,
		"u\x00" + apiKey + "\x00" + user,
	}
}

// failureAddr is the address a client's failures are counted under: an IPv6 address's /64, any other as it is.
func failureAddr(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is6() || a.Is4In6() {
		return ip
	}
	p, _ := a.Prefix(64)
	return p.String()
}

func (l *failureLimits) limits() [3]int { return [3]int{l.maxUserIP, l.maxIP, l.maxUserAll} }

// reserve counts one attempt of user (of apiKey) from ip, unless a limit of the caller's address is already
// reached: then it counts nothing and says how long the caller must wait. The limit of all addresses together
// refuses nothing (see failureLimits): an attempt past it is counted, and reported as excess unless it comes
// from a network the user logged in from.
func (f *failures) reserve(ip, apiKey, user string) reservation {
	keys, limits := failureKeys(ip, apiKey, user), f.limits()
	now := f.now()
	known := keys[userAll] != "" && f.known.has(ip, apiKey, user, now)
	f.mu.Lock()
	defer f.mu.Unlock()
	var r reservation
	for i, k := range keys {
		if k != "" && i != userAll {
			r.wait = max(r.wait, f.waitLocked(i, k, limits[i], now))
		}
	}
	if r.wait > 0 {
		return r
	}
	if k := keys[userAll]; k != "" && !known {
		if n, left := f.countLocked(userAll, k, now); n >= limits[userAll] {
			r.excess, r.left = n-limits[userAll]+1, left
		}
	}
	for i, k := range keys {
		switch w, ok := f.m.Get(k, now); {
		case k == "":
		case ok:
			w.n++
		case f.m.Add(k, &failureWindow{start: now, n: 1}, now):
		default:
			o := f.overflowLocked(i, k, now)
			o.n++
			failureOverflows.Inc()
		}
	}
	return r
}

// succeeded records that the core proved user's credential for a login from ip.
func (f *failures) succeeded(ip, apiKey, user string) {
	if wire.ValidAPIKey(apiKey) {
		f.known.record(ip, apiKey, user, f.now())
	}
}

// countLocked is the count of key, or of its coarse counter when that is higher, and when that count's window
// ends.
func (f *failures) countLocked(kind int, key string, now time.Time) (int, time.Duration) {
	var n int
	var left time.Duration
	if w, ok := f.m.Get(key, now); ok {
		n, left = w.n, w.start.Add(f.window).Sub(now)
	}
	if o := f.overflowLocked(kind, key, now); o.n > n {
		n, left = o.n, o.start.Add(f.window).Sub(now)
	}
	return n, left
}

// release takes back an attempt that reserve counted and the core did not refuse.
func (f *failures) release(ip, apiKey, user string) {
	keys := failureKeys(ip, apiKey, user)
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, k := range keys {
		if k == "" {
			continue
		}
		w, ok := f.m.Get(k, now)
		if !ok {
			w = f.overflowLocked(i, k, now)
		}
		if w.n > 0 {
			w.n--
		}
	}
}

// waitLocked is how long key's attempts must wait for its window, or its coarse counter's, to end once one
// of them has reached limit; 0 when neither has.
func (f *failures) waitLocked(kind int, key string, limit int, now time.Time) time.Duration {
	var wait time.Duration
	if w, ok := f.m.Get(key, now); ok && w.n >= limit {
		wait = w.start.Add(f.window).Sub(now)
	}
	if o := f.overflowLocked(kind, key, now); o.n >= limit {
		wait = max(wait, o.start.Add(f.window).Sub(now))
	}
	return wait
}

// overflowLocked is key's coarse counter of its kind of limit, started again when its window has ended.
func (f *failures) overflowLocked(kind int, key string, now time.Time) *failureWindow {
	o := &f.over[kind][maphash.String(f.seed, key)%overflowSlots]
	if !now.Before(o.start.Add(f.window)) {
		*o = failureWindow{start: now}
	}
	return o
}
