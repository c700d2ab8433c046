package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/reqgate/reqgate/core"
)

// schema is what an account's requests need besides records: its objects, their fields and its users.
// It changes only when an account file is applied, so it is kept for a few seconds (schemaCache) instead
// of being read on every request. Everything in it is shared: callers must not modify it.
type schema struct {
	objects  []core.Object
	fields   map[string][]core.Field // kind (api_prefix) -> fields by sort
	users    []core.User
	userByID map[int64]int // user id -> index in users
	exp      time.Time
	// refreshing is set (under schemaCache.mu) while a background reload of an expired schema runs.
	refreshing bool
}

// user returns the user with id.
func (sc *schema) user(id int64) (core.User, bool) {
	i, ok := sc.userByID[id]
	if !ok {
		return core.User{}, false
	}
	return sc.users[i], true
}

// schemaCache holds the schema of each account for a short TTL.
type schemaCache struct {
	ttl   time.Duration // <= 0: load on every request
	now   func() time.Time
	mu    sync.Mutex
	m     map[int64]*schema
	group singleflight.Group
}

func newSchemaCache(ttl time.Duration, now func() time.Time) *schemaCache {
	return &schemaCache{ttl: ttl, now: now, m: make(map[int64]*schema)}
}

func (sc *schemaCache) flush() {
	sc.mu.Lock()
	clear(sc.m)
	sc.mu.Unlock()
}

// schemaOf returns the schema of the call's account, from the cache while it is fresh. For one more TTL
// after that, the stale schema is returned while a single background reload runs; older entries are
// reloaded before the request goes on.
func (s *Server) schemaOf(ctx context.Context, c *call) (*schema, error) {
	id := c.Account.ID
	sc := s.schema
	if sc.ttl > 0 {
		sc.mu.Lock()
		cur := sc.m[id]
		sc.mu.Unlock()
		if cur != nil && sc.now().Before(cur.exp) {
			return cur, nil
		}
	}
	load := func() (*schema, error) {
		v, err, _ := sc.group.Do(strconv.FormatInt(id, 10), func() (any, error) {
			cur, err := s.loadSchema(context.WithoutCancel(ctx), id)
			if err != nil {
				return nil, err
			}
			if sc.ttl > 0 {
				cur.exp = sc.now().Add(sc.ttl)
				sc.mu.Lock()
				sc.m[id] = cur
				sc.mu.Unlock()
			}
			return cur, nil
		})
		if err != nil {
			return nil, err
		}
		return v.(*schema), nil
	}
	if sc.ttl > 0 {
		sc.mu.Lock()
		cur := sc.m[id]
		stale := cur != nil && !cur.refreshing && sc.now().Before(cur.exp.Add(sc.ttl))
		if stale {
			cur.refreshing = true
		}
		sc.mu.Unlock()
		if stale {
			// Serve the stale schema while one refresh runs, so requests never queue behind a reload.
			go func() {
				if _, err := load(); err != nil {
					s.log.Warn("core api: schema refresh failed", "account", id, "err", err)
					sc.mu.Lock()
					cur.refreshing = false
					sc.mu.Unlock()
				}
			}()
			return cur, nil
		}
	}
	return load()
}

// loadSchema reads an account's objects, fields and users from the store.
func (s *Server) loadSchema(ctx context.Context, accountID int64) (*schema, error) {
	objs, err := s.st.Objects(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("load objects: %w", err)
	}
	sc := &schema{objects: objs, fields: make(map[string][]core.Field, len(objs))}
	for _, o := range objs {
		fs, err := s.st.Fields(ctx, accountID, o.APIPrefix)
		if err != nil {
			return nil, fmt.Errorf("load fields of %s: %w", o.APIPrefix, err)
		}
		sc.fields[o.APIPrefix] = fs
	}
	users, err := s.st.Users(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("load users: %w", err)
	}
	sc.users = make([]core.User, len(users))
	sc.userByID = make(map[int64]int, len(users))
	for i, u := range users {
		u.PasswordHash = nil
		sc.users[i] = u
		sc.userByID[u.ID] = i
	}
	return sc, nil
}

// object resolves a path segment to a kind of record: re, ft, uc, or (version 2 and later) a custom
// object's api_prefix. Anything else is a 404 that names the segment.
func (s *Server) object(ctx context.Context, c *call, segment string) (core.Object, error) {
	sc, err := s.schemaOf(ctx, c)
	if err != nil {
		return core.Object{}, err
	}
	for _, o := range sc.objects {
		if o.APIPrefix == segment {
			if o.Custom && c.Version < 2 {
				return core.Object{}, &httpError{http.StatusNotFound, "The object " + segment +
					" does not exist in version 1; custom objects need version 2 (/api2/)."}
			}
			return o, nil
		}
	}
	if segment == "object" {
		// The segment of the object list, which is no kind of record (object/1 is no record).
		return core.Object{}, errNoRoute
	}
	return core.Object{}, &httpError{http.StatusNotFound, "The object " + clip(segment) + " does not exist."}
}

// fields returns the field definitions of a kind ordered by sort (shared: do not modify).
func (s *Server) fields(ctx context.Context, c *call, kind string) ([]core.Field, error) {
	sc, err := s.schemaOf(ctx, c)
	if err != nil {
		return nil, err
	}
	fs, ok := sc.fields[kind]
	if !ok {
		return nil, fmt.Errorf("fields of %q: %w", kind, core.ErrNotFound)
	}
	return fs, nil
}

// users returns the account's users ordered by id (shared: do not modify).
func (s *Server) users(ctx context.Context, c *call) ([]core.User, error) {
	sc, err := s.schemaOf(ctx, c)
	if err != nil {
		return nil, err
	}
	return sc.users, nil
}
