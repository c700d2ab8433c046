package cache

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// configured are the options cmd/reqgate gives a cache under the default configuration.
func configured() Options {
	c := config.Default(config.RoleGateway).Cache
	return Options{MaxBytes: c.MaxBytes, TTL: c.TTL, StaleIfError: c.StaleIfError}
}

// newCache builds a cache from the default configuration with the fields opt sets.
func newCache(t testing.TB, opt Options) *Cache {
	t.Helper()
	c, err := New(configtest.Overlay(configured(), opt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestGetFreshStaleExpired(t *testing.T) {
	clk := testsupport.NewClock(time.Unix(1_700_000_000, 0))
	c := newCache(t, Options{TTL: 10 * time.Second, StaleIfError: time.Minute, Now: clk.Now})
	key := c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "", "xml")
	body := []byte("<requirement/>")
	if err := c.Set(key, &Entry{Status: 200, Body: body, Header: []Header{{"Content-Type", "application/xml"}}}); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	for _, tc := range []struct {
		name      string
		advance   time.Duration
		wantFound bool
		wantFresh bool
		wantAge   time.Duration
	}{
		{"fresh", 0, true, true, 0},
		{"still fresh", 9 * time.Second, true, true, 9 * time.Second},
		{"stale", 2 * time.Second, true, false, 11 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk.Add(tc.advance)
			l, ok := c.Get(key)
			if got, want := ok, tc.wantFound; got != want {
				t.Fatalf("found=%v, want %v", got, want)
			}
			if got, want := l.Fresh, tc.wantFresh; got != want {
				t.Errorf("fresh=%v, want %v", got, want)
			}
			if got, want := l.Age, tc.wantAge; got != want {
				t.Errorf("age=%v, want %v", got, want)
			}
			if got, want := string(l.Entry.Body), string(body); got != want {
				t.Errorf("body=%q, want %q", got, want)
			}
		})
	}
}

func TestKeysDiffer(t *testing.T) {
	c := newCache(t, Options{})
	base := c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "a=1", "xml")
	for _, tc := range []struct {
		name string
		key  string
	}{
		{"account", c.Key(Scope{}, "demo2", "", 2, "/api2/demo/re/1", "a=1", "xml")},
		{"user", c.Key(Scope{}, "demo", "viewer", 2, "/api2/demo/re/1", "a=1", "xml")},
		{"version", c.Key(Scope{}, "demo", "", 1, "/api2/demo/re/1", "a=1", "xml")},
		{"path", c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/2", "a=1", "xml")},
		{"query", c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "a=2", "xml")},
		{"repr", c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "a=1", "json")},
		{"separator shift", c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1a=1", "", "xml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.key == base {
				t.Fatalf("key %q equals the base key", tc.key)
			}
		})
	}
	if got, want := c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "a=1", "xml"), base; got != want {
		t.Fatalf("same inputs gave %q, want %q", got, want)
	}
}

func TestInvalidate(t *testing.T) {
	c := newCache(t, Options{})
	k1 := c.Key(Scope{}, "demo", "", 2, "/p", "", "xml")
	other := c.Key(Scope{}, "acme", "", 2, "/p", "", "xml")
	for _, k := range []string{k1, other} {
		if err := c.Set(k, &Entry{Status: 200, Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	c.Wait()
	c.Invalidate("demo")
	if got, want := c.Key(Scope{}, "demo", "", 2, "/p", "", "xml") == k1, false; got != want {
		t.Fatalf("key after Invalidate unchanged")
	}
	if _, ok := c.Get(c.Key(Scope{}, "demo", "", 2, "/p", "", "xml")); ok {
		t.Fatalf("entry of demo still visible after Invalidate")
	}
	if _, ok := c.Get(c.Key(Scope{}, "acme", "", 2, "/p", "", "xml")); !ok {
		t.Fatalf("entry of another account lost by Invalidate(demo)")
	}
	c.InvalidateAll()
	if _, ok := c.Get(c.Key(Scope{}, "acme", "", 2, "/p", "", "xml")); ok {
		t.Fatalf("entry still visible after InvalidateAll")
	}
}

// scopedReads are reads of every scope of two accounts, for the tests of InvalidateWrite: each name maps to
// the scope of its key.
var scopedReads = map[string]struct {
	account string
	scope   Scope
}{
	"re/2":            {"demo", Scope{Reads: ReadsRecord, Kind: "re", ID: "2"}},
	"re/4":            {"demo", Scope{Reads: ReadsRecord, Kind: "re", ID: "4"}},
	"ft/2":            {"demo", Scope{Reads: ReadsRecord, Kind: "ft", ID: "2"}},
	"re search":       {"demo", Scope{Reads: ReadsKind, Kind: "re"}},
	"ft search":       {"demo", Scope{Reads: ReadsKind, Kind: "ft"}},
	"related":         {"demo", Scope{Reads: ReadsAnyRecord}},
	"fields":          {"demo", Scope{}},
	"other re/2":      {"acme", Scope{Reads: ReadsRecord, Kind: "re", ID: "2"}},
	"other re search": {"acme", Scope{Reads: ReadsKind, Kind: "re"}},
	"other related":   {"acme", Scope{Reads: ReadsAnyRecord}},
}

// scopedKeys are the keys of scopedReads now.
func scopedKeys(c *Cache) map[string]string {
	keys := map[string]string{}
	for name, r := range scopedReads {
		keys[name] = c.Key(r.scope, r.account, "", 2, "/"+name, "", "xml")
	}
	return keys
}

// TestInvalidateWrite checks what a write makes old: its record's reads, its kind's, the reads that may show
// any record, all in its account; with no kind, the whole account; and nothing else.
func TestInvalidateWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		w       Write
		changed []string
	}{
		{"update", Write{Account: "demo", Kind: "re", ID: "2"}, []string{"re/2", "re search", "related"}},
		{"create", Write{Account: "demo", Kind: "re"}, []string{"re search", "related"}},
		{"other kind", Write{Account: "demo", Kind: "ft", ID: "2"}, []string{"ft/2", "ft search", "related"}},
		{"anything", Write{Account: "demo"}, []string{"re/2", "re/4", "ft/2", "re search", "ft search", "related",
			"fields"}},
		{"other account", Write{Account: "acme", Kind: "re", ID: "2"}, []string{"other re/2", "other re search",
			"other related"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t, Options{})
			before := scopedKeys(c)
			c.InvalidateWrite(tc.w)
			after := scopedKeys(c)
			for name := range scopedReads {
				if got, want := after[name] != before[name], slices.Contains(tc.changed, name); got != want {
					t.Errorf("%s: key changed=%v, want %v", name, got, want)
				}
			}
			if got := scopedKeys(c); !maps.Equal(got, after) {
				t.Errorf("keys changed without a write: %v, then %v", after, got)
			}
		})
	}
}

// TestInvalidateWriteBoundsKinds writes to more kinds than an account remembers: the write past the bound
// invalidates the whole account, and remembers nothing more.
func TestInvalidateWriteBoundsKinds(t *testing.T) {
	c := newCache(t, Options{})
	for i := range maxKinds {
		c.InvalidateWrite(Write{Account: "demo", Kind: "k" + strconv.Itoa(i), ID: "1"})
	}
	if got, want := c.Generation("demo"), uint64(0); got != want {
		t.Fatalf("generation %d after writes within the bound, want %d", got, want)
	}
	key := c.Key(Scope{Reads: ReadsRecord, Kind: "past", ID: "1"}, "demo", "", 2, "/past/1", "", "xml")
	c.InvalidateWrite(Write{Account: "demo", Kind: "past", ID: "1"})
	if got, want := c.Generation("demo"), uint64(1); got != want {
		t.Errorf("generation %d after a write past the bound, want %d", got, want)
	}
	if c.Key(Scope{Reads: ReadsRecord, Kind: "past", ID: "1"}, "demo", "", 2, "/past/1", "", "xml") == key {
		t.Error("the record's key did not change")
	}
	if got, want := len(*c.account("demo").kinds.Load()), maxKinds; got != want {
		t.Errorf("%d kinds remembered, want %d", got, want)
	}
}

func TestSetRejectsHugeAndNil(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 4096})
	if err := c.Set("k", nil); err == nil {
		t.Fatal("nil entry stored")
	}
	if err := c.Set("k", &Entry{Body: make([]byte, 4096)}); err == nil {
		t.Fatal("entry larger than half the budget stored")
	}
}

// TestByteBudget: the bytes a cache counts (its fixed tables and its entries) stay within its budget. (A budget
// below the fixed tables' few hundred KiB cannot hold; Options.MaxBytes says so.)
func TestByteBudget(t *testing.T) {
	const limit = 2 << 20
	c := newCache(t, Options{MaxBytes: limit})
	body := make([]byte, 1024)
	for i := range 4000 {
		_ = c.Set(c.Key(Scope{}, "demo", "", 2, "/p/"+strconv.Itoa(i), "", "xml"), &Entry{Body: body})
	}
	c.Wait()
	if got := c.Stats().Bytes; got > limit {
		t.Fatalf("bytes=%d, over the budget %d", got, limit)
	}
}

// BenchmarkGetAtHit is the cache's share of a hit: the store lookup and the freshness check.
func BenchmarkGetAtHit(b *testing.B) {
	c := newCache(b, Options{})
	key := c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "", "xml")
	if err := c.Set(key, &Entry{Status: 200, Body: []byte("<requirement/>")}); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if l, ok := c.GetAt(key, now, 0); !ok || !l.Fresh {
				b.Fatal("miss")
			}
		}
	})
	// As on a replica of the Redis bus: every hit checks the lease.
	leased := newCache(b, Options{})
	leased.RequireLease()
	leased.SetLease(time.Now().Add(time.Hour))
	if err := leased.Set(key, &Entry{Status: 200, Body: []byte("<requirement/>")}); err != nil {
		b.Fatal(err)
	}
	b.Run("sequential leased", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if l, ok := leased.GetAt(key, now, 0); !ok || !l.Fresh {
				b.Fatal("miss")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if l, ok := c.GetAt(key, now, 0); !ok || !l.Fresh {
					b.Error("miss") // not Fatal: this is not the benchmark's goroutine
					return
				}
			}
		})
	})
}

// BenchmarkAppendKey is the cost of a hit's key by the scope of the read, in an account and kind already
// written (the slowest case: every generation is looked up). "account" reads only the epoch and the account's
// generation, as every key did before reads had scopes.
func BenchmarkAppendKey(b *testing.B) {
	c := newCache(b, Options{})
	c.InvalidateWrite(Write{Account: "demo", Kind: "re", ID: "1"})
	for _, tc := range []struct {
		name string
		sc   Scope
	}{
		{"account", Scope{}},
		{"record", Scope{Reads: ReadsRecord, Kind: "re", ID: "1"}},
		{"kind", Scope{Reads: ReadsKind, Kind: "re"}},
		{"any record", Scope{Reads: ReadsAnyRecord}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf = c.AppendKey(buf[:0], tc.sc, "demo", "", 2, "/api2/demo/re/1", "", "xml")
			}
		})
	}
}

// TestBusDownTTL checks that while the bus is down an entry is fresh only below BusDownTTL (and still found,
// as a stale stand-in), and that the TTL applies again once the bus is up.
func TestBusDownTTL(t *testing.T) {
	clk := testsupport.NewClock(time.Unix(1_700_000_000, 0))
	c := newCache(t, Options{TTL: 10 * time.Second, BusDownTTL: time.Second, Now: clk.Now})
	key := c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "", "xml")
	if err := c.Set(key, &Entry{Status: 200, Body: []byte("<requirement/>")}); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	for _, tc := range []struct {
		name      string
		up        bool
		age       time.Duration
		wantFresh bool
	}{
		{"up, young", true, 500 * time.Millisecond, true},
		{"down, young", false, 500 * time.Millisecond, true},
		{"down, older than BusDownTTL", false, 2 * time.Second, false},
		{"up again, same entry", true, 2 * time.Second, true},
		{"up, older than TTL", true, 11 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.SetBusUp(tc.up)
			l, ok := c.GetAt(key, clk.Now().Add(tc.age), 0)
			if !ok {
				t.Fatal("entry not found")
			}
			if got, want := l.Fresh, tc.wantFresh; got != want {
				t.Errorf("fresh=%v, want %v", got, want)
			}
		})
	}
}

// TestBusDownTTLNeverAboveTTL checks that a BusDownTTL above the TTL does not lengthen freshness.
func TestBusDownTTLNeverAboveTTL(t *testing.T) {
	clk := testsupport.NewClock(time.Unix(1_700_000_000, 0))
	c := newCache(t, Options{TTL: time.Second, BusDownTTL: time.Minute, Now: clk.Now})
	key := c.Key(Scope{}, "demo", "", 2, "/p", "", "xml")
	if err := c.Set(key, &Entry{Status: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	c.SetBusUp(false)
	if l, ok := c.GetAt(key, clk.Now().Add(2*time.Second), 0); !ok || l.Fresh {
		t.Errorf("found=%v fresh=%v past the TTL with the bus down, want a stale entry", ok, l.Fresh)
	}
}

// TestNewRefuses checks that New refuses what no configuration can mean instead of putting a default in its
// place, and that 0 in StaleIfError means never.
func TestNewRefuses(t *testing.T) {
	configtest.CheckNew(t, configured, func(o Options) error {
		c, err := New(o)
		if err == nil {
			c.Close()
		}
		return err
	}, []configtest.Edit[Options]{
		configtest.Accepted("configured", func(*Options) {}),
		configtest.Accepted("stale never", func(o *Options) { o.StaleIfError = 0 }),
		configtest.Refused("zero max bytes", func(o *Options) { o.MaxBytes = 0 }, "max bytes 0"),
		configtest.Refused("zero ttl", func(o *Options) { o.TTL = 0 }, "ttl 0s"),
		configtest.Refused("negative stale", func(o *Options) { o.StaleIfError = -1 }, "stale-if-error"),
		configtest.Refused("negative bus-down ttl", func(o *Options) { o.BusDownTTL = -1 }, "bus-down ttl"),
	})
}
