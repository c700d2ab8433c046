package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/singleflight"

	"github.com/reqgate/reqgate/core"
)

// maxAuthEntries bounds the credential cache; when it is full, expired entries go first, then everything.
const maxAuthEntries = 10000

// authCache remembers verified credentials so that a request does not cost a bcrypt comparison (tens of
// milliseconds by design). Entries are keyed by an HMAC-SHA256, under a random per-process key, of the
// api_key, username and password: the cache never holds a password, and a memory dump does not give one
// away. Only successes are remembered, so a wrong password is checked afresh every time and never
// becomes right. Concurrent checks of the same credential share one bcrypt run (singleflight).
type authCache struct {
	ttl   time.Duration // <= 0: no caching
	now   func() time.Time
	key   [32]byte
	macs  sync.Pool // hash.Hash keyed with key
	mu    sync.Mutex
	m     map[[32]byte]authEntry
	group singleflight.Group
}

type authEntry struct {
	acct core.Account
	user core.User
	exp  time.Time
}

// dummyHash is compared against when the user does not exist, so that unknown and known usernames take
// the same time to refuse.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("reqgate: no such user"), bcrypt.MinCost)

func newAuthCache(ttl time.Duration, now func() time.Time) *authCache {
	a := &authCache{ttl: ttl, now: now, m: make(map[[32]byte]authEntry)}
	if _, err := rand.Read(a.key[:]); err != nil {
		panic(fmt.Sprintf("core api: no randomness for the credential cache key: %v", err))
	}
	a.macs.New = func() any { return hmac.New(sha256.New, a.key[:]) }
	return a
}

// digest is the cache key of a credential. Each part is length-prefixed so that no two different
// credentials share an input.
func (a *authCache) digest(apiKey, user, pass string) [32]byte {
	h := a.macs.Get().(hash.Hash)
	h.Reset()
	var n [4]byte
	for _, s := range [...]string{apiKey, user, pass} {
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var d [32]byte
	h.Sum(d[:0])
	a.macs.Put(h)
	return d
}

func (a *authCache) get(d [32]byte) (authEntry, bool) {
	if a.ttl <= 0 {
		return authEntry{}, false
	}
	a.mu.Lock()
	e, ok := a.m[d]
	a.mu.Unlock()
	if !ok || !a.now().Before(e.exp) {
		return authEntry{}, false
	}
	return e, true
}

func (a *authCache) put(d [32]byte, e authEntry) {
	if a.ttl <= 0 {
		return
	}
	e.exp = a.now().Add(a.ttl)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.m) >= maxAuthEntries {
		now := a.now()
		for k, v := range a.m {
			if !now.Before(v.exp) {
				delete(a.m, k)
			}
		}
		if len(a.m) >= maxAuthEntries {
			clear(a.m)
		}
	}
	a.m[d] = e
}

func (a *authCache) flush() {
	a.mu.Lock()
	clear(a.m)
	a.mu.Unlock()
}

// authenticate checks the Basic credentials of r against the account of apiKey. Missing or wrong
// credentials, an unknown api_key, and a deleted or not Active user are all errUnauthorized; store trouble
// is returned as is (500).
func (s *Server) authenticate(ctx context.Context, r *http.Request, apiKey string) (core.Account, core.User, error) {
	username, password, ok := r.BasicAuth()
	if !ok || username == "" || len(username) > 256 || len(password) > 1024 {
		return core.Account{}, core.User{}, errUnauthorized
	}
	d := s.auth.digest(apiKey, username, password)
	if e, ok := s.auth.get(d); ok {
		return e.acct, e.user, nil
	}
	v, err, _ := s.auth.group.Do(string(d[:]), func() (any, error) {
		// Detached from the first caller's cancellation: the others waiting on this check need the result.
		ctx := context.WithoutCancel(ctx)
		acct, err := s.st.Account(ctx, apiKey)
		if errors.Is(err, core.ErrNotFound) {
			bcrypt.CompareHashAndPassword(dummyHash, []byte(password)) //nolint:errcheck // timing only
			return nil, errUnauthorized
		}
		if err != nil {
			return nil, fmt.Errorf("authenticate: account %q: %w", apiKey, err)
		}
		user, err := s.st.UserByName(ctx, acct.ID, username)
		if errors.Is(err, core.ErrNotFound) {
			bcrypt.CompareHashAndPassword(dummyHash, []byte(password)) //nolint:errcheck // timing only
			return nil, errUnauthorized
		}
		if err != nil {
			return nil, fmt.Errorf("authenticate: user of account %q: %w", apiKey, err)
		}
		if len(user.PasswordHash) == 0 || user.Deleted || !active(user) {
			return nil, errUnauthorized
		}
		if bcrypt.CompareHashAndPassword(user.PasswordHash, []byte(password)) != nil {
			return nil, errUnauthorized
		}
		user.PasswordHash = nil
		e := authEntry{acct: acct, user: user}
		s.auth.put(d, e)
		return e, nil
	})
	if err != nil {
		return core.Account{}, core.User{}, err
	}
	e := v.(authEntry)
	return e.acct, e.user, nil
}

// active reports whether a user may log in: status Active (the account file's default). A user set to any
// other status (Inactive, Disabled, ...) keeps its records and history but is refused like a deleted one.
func active(u core.User) bool { return u.Status == "" || strings.EqualFold(u.Status, "Active") }
