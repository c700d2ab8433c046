package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"sync"

	"github.com/reqgate/reqgate/core"
)

// metaCache keeps what only Apply and Import change (accounts, objects, field definitions) in memory, because
// the HTTP layer asks for them on nearly every request. Apply and Import empty it after they commit. A load that raced with an
// Apply is not kept: entries are stored only when the generation they were read under is still current.
// Only found things are cached, so unknown keys sent by clients cannot grow it.
type metaCache struct {
	mu       sync.Mutex
	gen      uint64
	accounts map[string]core.Account
	objects  map[int64][]core.Object
	kinds    map[kindKey]*kindInfo
}

type kindKey struct {
	account int64
	kind    string
}

// kindInfo is what the store needs to know about one kind of an account.
type kindInfo struct {
	fields     []core.Field             // ordered by sort, then id
	searchable map[int64]core.FieldType // Picklist and Textbox fields by id
	titleKey   any                      // key of the title value in vals ("103"), or nil without a title field
}

func (c *metaCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// reset drops everything; loads that started before it are not stored.
func (c *metaCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.accounts, c.objects, c.kinds = nil, nil, nil
}

func (c *metaCache) account(apiKey string) (core.Account, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.accounts[apiKey]
	return a, ok
}

func (c *metaCache) putAccount(gen uint64, a core.Account) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.accounts == nil {
		c.accounts = map[string]core.Account{}
	}
	c.accounts[a.APIKey] = a
}

func (c *metaCache) objectList(account int64) ([]core.Object, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	os, ok := c.objects[account]
	return slices.Clone(os), ok
}

func (c *metaCache) putObjects(gen uint64, account int64, os []core.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.objects == nil {
		c.objects = map[int64][]core.Object{}
	}
	c.objects[account] = slices.Clone(os)
}

func (c *metaCache) kind(account int64, kind string) *kindInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kinds[kindKey{account, kind}]
}

func (c *metaCache) putKind(gen uint64, account int64, kind string, ki *kindInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.kinds == nil {
		c.kinds = map[kindKey]*kindInfo{}
	}
	c.kinds[kindKey{account, kind}] = ki
}

// kindInfo returns what the store knows about a kind (cached when the store caches), or core.ErrNotFound. The
// result is shared: callers must not modify it.
func (s *Store) kindInfo(ctx context.Context, accountID int64, kind string) (*kindInfo, error) {
	if s.cache == nil {
		fs, err := loadFields(ctx, s.db, accountID, kind)
		if err != nil {
			return nil, err
		}
		return newKindInfo(fs), nil
	}
	if ki := s.cache.kind(accountID, kind); ki != nil {
		return ki, nil
	}
	gen := s.cache.generation()
	fs, err := loadFields(ctx, s.db, accountID, kind)
	if err != nil {
		return nil, err
	}
	ki := newKindInfo(fs)
	s.cache.putKind(gen, accountID, kind, ki)
	return ki, nil
}

func newKindInfo(fs []core.Field) *kindInfo {
	ki := &kindInfo{fields: fs, searchable: map[int64]core.FieldType{}}
	for _, f := range fs {
		if core.Searchable(f.Type) {
			ki.searchable[f.ID] = f.Type
		}
		if f.SpecialPurpose == "title" && ki.titleKey == nil {
			ki.titleKey = strconv.FormatInt(f.ID, 10)
		}
	}
	return ki
}

// cloneFields deep-copies field definitions, so callers may change what they get.
func cloneFields(fs []core.Field) []core.Field {
	out := slices.Clone(fs)
	if out == nil {
		out = []core.Field{}
	}
	for i := range out {
		out[i].Options = slices.Clone(out[i].Options)
	}
	return out
}
