// Package cache holds the gateway's response cache: copied upstream responses in a ristretto cache with a byte
// budget, made invisible after writes by generations that are part of every key (one per account, and one per
// scope a write can change: a record, the records of a kind, every record of the account), and an invalidation
// bus that carries those bumps to the other gateway replicas (in process, or over Redis pub/sub).
package cache

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/reqgate/reqgate/internal/digits"
	"github.com/reqgate/reqgate/internal/striped"
)

// DefaultBusDownTTL is the BusDownTTL of a zero Options: not a configuration key, a bound the cache keeps for its
// own correctness.
const DefaultBusDownTTL = time.Second

// Options configure a Cache. The values the configuration gives (cache.*) come resolved from package config,
// which holds their defaults; New refuses an impossible one.
type Options struct {
	// MaxBytes is the memory budget of the cache (cache.max_bytes), > 0: the store's fixed tables and every
	// entry as it lies on the heap (size.go). Below about 1 MiB the fixed tables (0.4 MiB at least) take more than
	// half of it; the entries then get half, and the cache holds more than MaxBytes.
	MaxBytes     int64
	TTL          time.Duration // freshness of an entry (cache.ttl); > 0
	StaleIfError time.Duration // how long past TTL an entry may stand in when the upstream fails; 0 = never
	// BusDownTTL is the freshness of an entry while the invalidation bus is down (SetBusUp): the other
	// replicas' writes may go unheard then, so a read must not be older than this. Zero: DefaultBusDownTTL;
	// never above TTL.
	BusDownTTL time.Duration
	Now        func() time.Time // nil: time.Now
}

// Header is one stored response header.
type Header struct{ Key, Value string }

// Entry is one cached response. Every field is owned by the entry (copied from the upstream response) and
// never changes once Set, so a hit may hand Body to fasthttp's SetBodyRaw.
type Entry struct {
	Status int
	Header []Header
	Body   []byte
	Stored time.Time

	// The representations of Body the gateway serves, made once before the entry is stored: its entity tag,
	// and Body compressed with gzip and brotli with their own tags (nil where compression does not pay).
	ETag                 string
	Gzip, Brotli         []byte
	GzipETag, BrotliETag string

	// ID tells stored entries apart, unique in the process (0: never stored): a reader may remember what it
	// wrote from an entry by its ID without keeping the entry itself alive.
	ID uint64
}

// entryIDs numbers the entries Set stores.
var entryIDs atomic.Uint64

// Cache is a TTL cache of responses keyed by Key. It is safe for concurrent use.
type Cache struct {
	opt      Options
	store    *ristretto.Cache[string, *Entry]
	fixed    int64         // the memory of the store's fixed tables and of records, counted against MaxBytes
	fresh    atomic.Int64  // how young a fresh entry is, in ns: TTL, or BusDownTTL while the bus is down
	ttl      atomic.Int64  // TTL in ns (SetTTL changes it)
	staleFor atomic.Int64  // StaleIfError in ns (SetTTL changes it)
	busUp    atomic.Bool   // SetBusUp's last word
	setMu    sync.Mutex    // serialises SetBusUp and SetTTL, which both compute fresh
	epoch    atomic.Uint64 // bumped by InvalidateAll: every key of the process changes
	gens     sync.Map      // account -> *generations

	// The generations of records: a fixed table, so that the records a process has ever seen written cost no
	// memory. Each kind of each account gets a window of recordWindow consecutive slots when it is first
	// written, and a record with a numeric id the slot of its id within it, so the records of a kind share a
	// slot only when their ids lie len(records) apart, and the windows of kinds overlap only once
	// len(records)/recordWindow kinds have been written. Records sharing a slot invalidate each other's reads
	// too, which costs hits, never freshness.
	records  []atomic.Uint64
	nextBase atomic.Uint64 // the start of the next kind's window
	seed     maphash.Seed  // for the slot of an id that is not a number

	hits, misses     striped.Counter // every read counts: striped, each on lines of its own
	stale, evictions atomic.Uint64

	// The lease (RequireLease, SetLease): while leased, an entry is fresh only before leaseUntil, in ns
	// after leaseBase on the monotonic clock.
	leased     atomic.Bool
	leaseUntil atomic.Int64
}

// leaseBase is the origin of Cache.leaseUntil; its monotonic reading makes the lease immune to changes of the
// wall clock.
var leaseBase = time.Now()

// New builds a cache. Close releases its goroutines.
func New(opt Options) (*Cache, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if opt.BusDownTTL == 0 {
		opt.BusDownTTL = DefaultBusDownTTL
	}
	opt.BusDownTTL = min(opt.BusDownTTL, opt.TTL)
	if opt.Now == nil {
		opt.Now = time.Now
	}
	c := &Cache{opt: opt, seed: maphash.MakeSeed(), records: make([]atomic.Uint64, slotCount(opt.MaxBytes))}
	c.fresh.Store(int64(opt.TTL))
	c.ttl.Store(int64(opt.TTL))
	c.staleFor.Store(int64(opt.StaleIfError))
	c.busUp.Store(true)
	// About one counter per expected 1 KiB entry, times ten as ristretto advises; bounded either way.
	counters := min(max(opt.MaxBytes/1024*10, 10_000), 50_000_000)
	// The fixed tables come out of the budget; the entries get the rest, or half the budget at least.
	c.fixed = fixedSize(counters, len(c.records))
	store, err := ristretto.NewCache(&ristretto.Config[string, *Entry]{
		NumCounters: counters,
		MaxCost:     max(opt.MaxBytes-c.fixed, opt.MaxBytes/2),
		// A hit's access is recorded in a per-P buffer of this many keys, handed to the store's policy goroutine
		// when full: each hand-off wakes that goroutine, a thread switch on a busy server. 256 keys a hand-off
		// (ristretto's default is 64) wake it a quarter as often; the admission policy sees the same accesses,
		// later by a few hundred hits.
		BufferItems: 256,
		// An entry's cost (size.go) counts the store's bookkeeping of its item already.
		IgnoreInternalCost: true,
		OnEvict: func(*ristretto.Item[*Entry]) {
			c.evictions.Add(1)
			evictionsTotal.Inc()
		},
	})
	if err != nil {
		return nil, fmt.Errorf("cache: new ristretto: %w", err)
	}
	c.store = store
	register(c)
	return c, nil
}

// slotCount is the size of the table of record generations for a byte budget: a power of two, about one slot
// per 2 KiB of budget (an entry is rarely smaller, and a record has several), between 4096 and 1<<20 (8 MiB).
func slotCount(maxBytes int64) int {
	want := min(max(maxBytes/2048, 1<<12), 1<<20)
	return 1 << bits.Len64(uint64(want-1))
}

// check refuses the values no configuration can mean.
func (o *Options) check() error {
	switch {
	case o.MaxBytes <= 0:
		return fmt.Errorf("cache: max bytes %d: must be > 0", o.MaxBytes)
	case o.TTL <= 0:
		return fmt.Errorf("cache: ttl %s: must be > 0", o.TTL)
	case o.StaleIfError < 0:
		return fmt.Errorf("cache: stale-if-error %s: must not be negative (0 = never)", o.StaleIfError)
	case o.BusDownTTL < 0:
		return fmt.Errorf("cache: bus-down ttl %s: must not be negative", o.BusDownTTL)
	}
	return nil
}

// TTL is the freshness of an entry.
func (c *Cache) TTL() time.Duration { return time.Duration(c.ttl.Load()) }

// SetTTL changes TTL and StaleIfError (as in Options: TTL > 0, StaleIfError 0 = never) while the cache serves,
// for a reloaded configuration. Freshness is judged by the new TTL from the next Get on, for the entries
// already stored too; an entry already stored stays in the store for the old TTL plus StaleIfError, but never
// stands in past the new ones. Values Options would refuse are refused and change nothing.
func (c *Cache) SetTTL(ttl, staleIfError time.Duration) error {
	o := c.opt
	o.TTL, o.StaleIfError = ttl, staleIfError
	if err := o.check(); err != nil {
		return err
	}
	c.setMu.Lock()
	defer c.setMu.Unlock()
	c.ttl.Store(int64(ttl))
	c.staleFor.Store(int64(staleIfError))
	c.storeFresh()
	return nil
}

// storeFresh sets fresh from the TTL and the bus state; setMu is held.
func (c *Cache) storeFresh() {
	ttl := c.ttl.Load()
	if c.busUp.Load() {
		c.fresh.Store(ttl)
	} else {
		c.fresh.Store(min(int64(c.opt.BusDownTTL), ttl))
	}
}

// Reads says what a cached read shows, and so which writes can make it old.
type Reads uint8

// The kinds of read.
const (
	// ReadsAccount is a read that only the account's files change (field lists, view definitions, users,
	// objects): only the account's own invalidation (Invalidate) makes it old.
	ReadsAccount Reads = iota
	// ReadsRecord is a read of one record, Kind and ID: the record in any version and representation, and
	// its field history.
	ReadsRecord
	// ReadsKind is a read of the records of a kind, Kind: a search, a view's contents.
	ReadsKind
	// ReadsAnyRecord is a read that may show any record of the account: related items, which show the
	// summaries of other records.
	ReadsAnyRecord
)

// Scope is what a cached read depends on, besides the account (whose invalidation makes every read old).
type Scope struct {
	Reads Reads
	Kind  string // the kind of record, as its path segment names it (ReadsRecord, ReadsKind)
	ID    string // the record's id in canonical form (ReadsRecord): the same record must give the same ID
}

// Write is what a write may have changed: the record Kind/ID (an update, a delete), a new record of Kind (ID
// ""), or with Kind "" anything of the account. InvalidateWrite makes the reads it can change old.
type Write struct {
	Account string
	Kind    string
	ID      string
}

// Key builds the cache key of a read: the process epoch, the account's generation and the generation of the
// read's scope, then the scope (account, or account and user), the request's version, normalised path,
// sorted query and representation. The generations are read now, so a key taken before an upstream call
// names the state before any write that finishes during the call: such a late fill lands under an old
// generation and is never read.
func (c *Cache) Key(sc Scope, account, user string, version int, path, query, repr string) string {
	var buf [256]byte // one allocation, the key itself, for a key that fits
	return string(c.AppendKey(buf[:0], sc, account, user, version, path, query, repr))
}

// AppendKey appends the key of Key to b.
func (c *Cache) AppendKey(b []byte, sc Scope, account, user string, version int, path, query, repr string) []byte {
	var all, scope uint64
	if g := c.account(account); g != nil {
		all, scope = g.all.Load(), c.scopeGeneration(g, sc)
	}
	b = strconv.AppendUint(b, c.epoch.Load(), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, all, 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, scope, 10)
	for i, s := range [...]string{account, user, "", path, query, repr} {
		b = append(b, 0)
		if i == 2 {
			b = strconv.AppendInt(b, int64(version), 10)
		}
		b = append(b, s...)
	}
	return b
}

// generations are the generations of an account's reads.
type generations struct {
	all       atomic.Uint64 // every read of the account (Invalidate)
	anyRecord atomic.Uint64 // the reads that may show any record (ReadsAnyRecord)
	// kinds holds a kind's generations from its first write on. The map is never changed once stored: a new
	// kind stores a copy (under kindsMu), which is rare, so a read's lookup is a plain map access.
	kinds   atomic.Pointer[map[string]*kindGenerations]
	kindsMu sync.Mutex
}

// kindGenerations are the generations of the reads of one kind.
type kindGenerations struct {
	records atomic.Uint64 // the reads of the kind's records (ReadsKind)
	base    uint64        // the start of the kind's window in Cache.records
}

// maxKinds bounds the kinds an account remembers generations of. An account's kinds are those of its account
// file, a handful; a write to a kind past the bound (a path the core refused with a 5xx) invalidates the whole
// account instead.
const maxKinds = 1024

// recordWindow is how many consecutive slots of Cache.records a kind gets.
const recordWindow = 1 << 12

// Generation is the current generation of an account (0 until its first invalidation).
func (c *Cache) Generation(account string) uint64 {
	if g := c.account(account); g != nil {
		return g.all.Load()
	}
	return 0
}

// account is the generations of an account, nil before its first invalidation.
func (c *Cache) account(account string) *generations {
	if v, ok := c.gens.Load(account); ok {
		return v.(*generations)
	}
	return nil
}

// accountFor is the generations of an account, made at its first invalidation.
func (c *Cache) accountFor(account string) *generations {
	if g := c.account(account); g != nil {
		return g
	}
	v, _ := c.gens.LoadOrStore(account, new(generations))
	return v.(*generations)
}

// kind is the generations of a kind, nil before its first write.
func (g *generations) kind(kind string) *kindGenerations {
	if m := g.kinds.Load(); m != nil {
		return (*m)[kind]
	}
	return nil
}

// kindFor is the generations of a kind, made at its first write; nil when the account has maxKinds already.
func (c *Cache) kindFor(g *generations, kind string) *kindGenerations {
	if k := g.kind(kind); k != nil {
		return k
	}
	g.kindsMu.Lock()
	defer g.kindsMu.Unlock()
	var old map[string]*kindGenerations
	if m := g.kinds.Load(); m != nil {
		old = *m
	}
	if k := old[kind]; k != nil {
		return k
	}
	if len(old) >= maxKinds {
		return nil
	}
	m := make(map[string]*kindGenerations, len(old)+1)
	maps.Copy(m, old)
	k := &kindGenerations{base: c.nextBase.Add(recordWindow) - recordWindow}
	m[kind] = k
	g.kinds.Store(&m)
	return k
}

// scopeGeneration is the current generation of a read's scope in the account of g: 0 for ReadsAccount,
// which has none, and for a scope never written.
func (c *Cache) scopeGeneration(g *generations, sc Scope) uint64 {
	switch sc.Reads {
	case ReadsAccount:
		return 0
	case ReadsAnyRecord:
		return g.anyRecord.Load()
	}
	k := g.kind(sc.Kind)
	switch {
	case k == nil:
		return 0
	case sc.Reads == ReadsKind:
		return k.records.Load()
	}
	return c.recordSlot(k, sc.ID).Load()
}

// recordSlot is the generation of a record of a kind: the slot of its id in the kind's window when the id is
// a decimal number, else one the id's hash picks.
func (c *Cache) recordSlot(k *kindGenerations, id string) *atomic.Uint64 {
	off, ok := digits.Parse(id, 19)
	if !ok {
		off = maphash.String(c.seed, id)
	}
	return &c.records[(k.base+off)&uint64(len(c.records)-1)]
}

// Invalidate makes every entry of the account unreachable at once; they age out of the store later.
func (c *Cache) Invalidate(account string) {
	c.accountFor(account).all.Add(1)
	invalidationsTotal.Inc()
}

// InvalidateWrite makes unreachable the entries of the reads w can change: with a Kind, the record's reads
// (when w names one), the reads of the kind's records and the reads that may show any record of the account;
// without, every entry of the account (Invalidate).
//
// A kind's generations are made at its first write, and its reads see generation 0 until then; a record read
// then sees its slot's, which is 0 unless a record in the slot was written, and only grows: a key never
// returns to a generation of the past.
func (c *Cache) InvalidateWrite(w Write) {
	if w.Kind == "" {
		c.Invalidate(w.Account)
		return
	}
	g := c.accountFor(w.Account)
	k := c.kindFor(g, w.Kind)
	if k == nil {
		c.Invalidate(w.Account)
		return
	}
	if w.ID != "" {
		c.recordSlot(k, w.ID).Add(1)
	}
	k.records.Add(1)
	g.anyRecord.Add(1)
	invalidationsTotal.Inc()
}

// InvalidateAll makes every entry of the process unreachable, for when invalidations may have been missed.
func (c *Cache) InvalidateAll() {
	c.epoch.Add(1)
	invalidationsTotal.Inc()
}

// SetBusUp tells the cache whether it hears every invalidation of the other replicas. While it does not,
// entries older than BusDownTTL are not fresh: a read goes to the upstream (an older entry may still stand
// in when the upstream fails, as STALE). The bus calls it; a cache without one is always up.
func (c *Cache) SetBusUp(up bool) {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	c.busUp.Store(up)
	c.storeFresh()
}

// RequireLease makes every entry stale (a stand-in only, never a hit) except while a lease set by SetLease
// runs. The Redis bus requires one: a replica may serve a hit only while it can prove it has applied every
// invalidation published up to a recent moment (see RedisBus), so a replica that stopped hearing the bus (a
// paused process, a lost connection) stops serving hits before a writer elsewhere stops waiting for it.
func (c *Cache) RequireLease() { c.leased.Store(true) }

// SetLease lets entries be fresh until the moment until (on the monotonic clock); a zero time ends the lease
// at once.
func (c *Cache) SetLease(until time.Time) {
	if until.IsZero() {
		c.leaseUntil.Store(0)
		return
	}
	c.leaseUntil.Store(int64(until.Sub(leaseBase)))
}

// leaseHeld reports whether a hit may be served under the lease: always without RequireLease.
func (c *Cache) leaseHeld() bool {
	return !c.leased.Load() || int64(time.Since(leaseBase)) < c.leaseUntil.Load()
}

// Lookup is the result of Get.
type Lookup struct {
	Entry *Entry
	Age   time.Duration
	Fresh bool // younger than TTL (BusDownTTL while the bus is down); otherwise only a stale stand-in
}

// Get returns the entry under key, fresh or (within StaleIfError) stale. ok is false when there is none.
func (c *Cache) Get(key string) (l Lookup, ok bool) { return c.GetAt(key, c.opt.Now(), 0) }

// GetAt is Get at a time the caller has already read from the cache's clock (Options.Now), counted on stripe
// (internal/striped: the gateway's connection's).
func (c *Cache) GetAt(key string, now time.Time, stripe uint32) (l Lookup, ok bool) {
	e, found := c.store.Get(key)
	if !found {
		c.miss(stripe)
		return Lookup{}, false
	}
	age := now.Sub(e.Stored)
	if age < 0 {
		age = 0
	}
	l = Lookup{Entry: e, Age: age, Fresh: age < time.Duration(c.fresh.Load()) && c.leaseHeld()}
	if !l.Fresh && age >= time.Duration(c.ttl.Load()+c.staleFor.Load()) {
		// Stored for a longer TTL plus StaleIfError than SetTTL has set since.
		c.miss(stripe)
		return Lookup{}, false
	}
	if l.Fresh {
		c.hits.Inc(stripe)
		hitsTotal.Inc(stripe)
	} else {
		c.miss(stripe)
	}
	return l, true
}

func (c *Cache) miss(stripe uint32) {
	c.misses.Inc(stripe)
	missesTotal.Inc(stripe)
}

// ErrNotStored says an entry was not taken (nil, or larger than half the entries' budget).
var ErrNotStored = errors.New("cache: entry not stored")

// Set stores e under key for TTL plus StaleIfError and waits until the store has applied it, so a read that
// follows Set finds the entry (ristretto applies Sets asynchronously; without the wait, a request arriving
// just after a single-flight fill would miss and go upstream again). e must be an entry not yet stored, and
// must not change afterwards: Set replaces a byte slice that holds spare capacity (a compressor's output) by
// a tight copy, so the budget pays for bytes in use. The store may still refuse the entry under pressure;
// that is a later miss, never an error.
func (c *Cache) Set(key string, e *Entry) error {
	if e == nil {
		return ErrNotStored
	}
	e.Body, e.Gzip, e.Brotli = tight(e.Body), tight(e.Gzip), tight(e.Brotli)
	cost := e.size()
	if cost > c.store.MaxCost()/2 {
		return ErrNotStored
	}
	if e.Stored.IsZero() {
		e.Stored = c.opt.Now()
	}
	if e.ID == 0 {
		e.ID = entryIDs.Add(1)
	}
	if c.store.SetWithTTL(key, e, cost, time.Duration(c.ttl.Load()+c.staleFor.Load())) {
		c.store.Wait()
	}
	return nil
}

// CountStale records that a stale entry stood in for a failed upstream.
func (c *Cache) CountStale() {
	c.stale.Add(1)
	staleTotal.Inc()
}

// Wait blocks until pending Sets are applied (tests).
func (c *Cache) Wait() { c.store.Wait() }

// Stats are the cache's own counters since New.
type Stats struct {
	Hits, Misses, Stale, Evictions uint64
	Bytes                          int64
}

// Stats returns the counters of this cache.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Stale: c.stale.Load(), Evictions: c.evictions.Load(),
		Bytes: c.bytes(),
	}
}

// bytes is the memory the cache counts against MaxBytes now: its fixed tables and its entries.
func (c *Cache) bytes() int64 { return c.fixed + c.store.MaxCost() - c.store.RemainingCost() }

// Close stops the store's goroutines; the cache must not be used afterwards.
func (c *Cache) Close() {
	unregister(c)
	c.store.Close()
}
