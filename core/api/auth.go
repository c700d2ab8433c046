package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/singleflight"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/internal/credkey"
	"github.com/reqgate/reqgate/internal/ttlmap"
)

// maxAuthEntries bounds the credential cache; when it is full, expired entries go first, then everything.
const maxAuthEntries = 10000

// authCache remembers verified credentials so that a request does not cost a bcrypt comparison (tens of
// milliseconds by design). Entries are keyed by the credkey digest of the api_key, username and password:
// the cache never holds a password, and a memory dump does not give one away. Only successes are
// remembered, so a wrong password is checked afresh every time and never becomes right. Concurrent checks
// of the same credential share one bcrypt run (singleflight).
//
// When a remembered credential expires, it is checked against the store again (its account, its user, the
// user's status and hash), but the bcrypt comparison itself is not repeated while the user's hash is the one
// the credential was proved against (proofs): comparing the same password with the same hash can only give
// the same answer, so running it again proves nothing and would cost the core a bcrypt per credential per TTL
// (the gateway renews every credential in use before it expires). A changed password changes the hash, and the
// comparison runs again.
type authCache struct {
	now     func() time.Time
	keys    *credkey.Hasher
	m       *ttlmap.Map[[credkey.Size]byte, authEntry] // a TTL <= 0 remembers nothing
	proofs  *ttlmap.Map[[credkey.Size]byte, []byte]    // digest -> the user hash it was proved against
	compare func(hash, password []byte) error          // bcrypt.CompareHashAndPassword; counted in tests
	group   singleflight.Group
	cost    atomic.Int32 // bcrypt cost of the latest user hash compared against; 0 before the first
}

// proofTTL bounds how long a proof is kept: a credential not re-checked for that long costs one comparison
// again. Proofs do not go stale (see authCache); the bound only lets unused ones go.
const proofTTL = 24 * time.Hour

type authEntry struct {
	acct core.Account
	user core.User
}

// dummyHashes holds, by bcrypt cost, the hash compared against when there is no user hash to compare
// against. Each is made on first use: making one costs what a comparison costs, once per cost and process.
var dummyHashes sync.Map // int -> []byte

// dummyHash returns the dummy hash of the given cost.
func dummyHash(cost int) []byte {
	if h, ok := dummyHashes.Load(cost); ok {
		return h.([]byte)
	}
	h, err := bcrypt.GenerateFromPassword([]byte("reqgate: no such user"), cost)
	if err != nil {
		// Only an out-of-range cost fails, and costs come from bcrypt.Cost of a valid hash or the default.
		panic(fmt.Sprintf("core api: dummy bcrypt hash of cost %d: %v", cost, err))
	}
	actual, _ := dummyHashes.LoadOrStore(cost, h)
	return actual.([]byte)
}

// userHash returns the user's password hash if it is a bcrypt hash, and notes its cost; else nil.
func (a *authCache) userHash(u core.User) []byte {
	cost, err := bcrypt.Cost(u.PasswordHash)
	if err != nil {
		return nil
	}
	a.cost.Store(int32(cost))
	return u.PasswordHash
}

// refuse does the bcrypt comparison an accepted credential costs and returns errUnauthorized, so that the
// time of a refusal tells neither an unknown api_key, an unknown username, a deleted, inactive or
// password-less user nor a wrong password apart. It compares against hash, or when that is nil against a
// dummy hash of the cost of the real hashes.
//
// The core cannot know that cost in advance: the account file was hashed by another process, at
// accounts.BcryptCost of that process (which tests lower), and hashes kept from earlier account files may
// differ. So the cost is read from the user hashes themselves: the cost of the latest one compared against
// (following a change of cost as users log in), and bcrypt.DefaultCost, the cost of account files in
// production, until the server has met one.
func (a *authCache) refuse(hash []byte, password string) error {
	if hash == nil {
		cost := int(a.cost.Load())
		if cost == 0 {
			cost = bcrypt.DefaultCost
		}
		hash = dummyHash(cost)
	}
	bcrypt.CompareHashAndPassword(hash, []byte(password)) //nolint:errcheck // refused whatever it says
	return errUnauthorized
}

func newAuthCache(ttl time.Duration, now func() time.Time) *authCache {
	a := &authCache{now: now, keys: credkey.New(), compare: bcrypt.CompareHashAndPassword,
		m: ttlmap.New[[credkey.Size]byte, authEntry](ttl, maxAuthEntries)}
	keep := proofTTL
	if ttl <= 0 {
		keep = 0 // nothing remembered: every request is compared, as the operator asked
	}
	a.proofs = ttlmap.New[[credkey.Size]byte, []byte](keep, maxAuthEntries)
	return a
}

func (a *authCache) get(d [credkey.Size]byte) (authEntry, bool) { return a.m.Get(d, a.now()) }

func (a *authCache) put(d [credkey.Size]byte, e authEntry) { a.m.Set(d, e, a.now()) }

func (a *authCache) flush() { a.m.Clear() }

// authenticate checks the Basic credentials of r against the account of apiKey. Missing or wrong
// credentials, an unknown api_key, and a deleted or not Active user are all errUnauthorized, and each
// costs one bcrypt comparison (see refuse); store trouble is returned as is (core.ErrUnavailable becomes 503
// with Retry-After, anything else 500).
func (s *Server) authenticate(ctx context.Context, r *http.Request, apiKey string) (core.Account, core.User, error) {
	username, password, ok := r.BasicAuth()
	if !ok || username == "" || len(username) > 256 || len(password) > 1024 {
		return core.Account{}, core.User{}, errUnauthorized
	}
	d := s.auth.keys.Sum(apiKey, username, password)
	if e, ok := s.auth.get(d); ok {
		return e.acct, e.user, nil
	}
	v, err, _ := s.auth.group.Do(string(d[:]), func() (any, error) {
		// Detached from the first caller's cancellation: the others waiting on this check need the result.
		ctx := context.WithoutCancel(ctx)
		acct, err := s.st.Account(ctx, apiKey)
		if errors.Is(err, core.ErrNotFound) {
			return nil, s.auth.refuse(nil, password)
		}
		if err != nil {
			return nil, fmt.Errorf("authenticate: account %q: %w", apiKey, err)
		}
		user, err := s.st.UserByName(ctx, acct.ID, username)
		if errors.Is(err, core.ErrNotFound) {
			return nil, s.auth.refuse(nil, password)
		}
		if err != nil {
			return nil, fmt.Errorf("authenticate: user of account %q: %w", apiKey, err)
		}
		hash := s.auth.userHash(user)
		if hash == nil || user.Deleted || !active(user) {
			return nil, s.auth.refuse(hash, password)
		}
		if proved, ok := s.auth.proofs.Get(d, s.auth.now()); !ok || !bytes.Equal(proved, hash) {
			if s.auth.compare(hash, []byte(password)) != nil {
				return nil, errUnauthorized
			}
			s.auth.proofs.Set(d, bytes.Clone(hash), s.auth.now())
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
