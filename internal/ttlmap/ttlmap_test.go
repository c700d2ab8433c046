package ttlmap

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func TestGetSet(t *testing.T) {
	tests := []struct {
		name   string
		ttl    time.Duration
		setAt  time.Duration // after t0
		getAt  time.Duration
		wantOK bool
	}{
		{"fresh", time.Minute, 0, 59 * time.Second, true},
		{"at the set time", time.Minute, 0, 0, true},
		{"expired at the TTL", time.Minute, 0, time.Minute, false},
		{"expired after", time.Minute, 0, time.Hour, false},
		{"set again later", time.Minute, 30 * time.Second, 80 * time.Second, true},
		{"zero TTL remembers nothing", 0, 0, 0, false},
		{"negative TTL remembers nothing", -time.Second, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New[string, int](tt.ttl, 10)
			m.Set("k", 1, t0)
			m.Set("k", 2, t0.Add(tt.setAt))
			v, ok := m.Get("k", t0.Add(tt.getAt))
			if ok != tt.wantOK || ok && v != 2 {
				t.Errorf("Get = %d, %v; want 2, %v", v, ok, tt.wantOK)
			}
			if _, ok := m.Get("other", t0); ok {
				t.Error("Get of a key never set found it")
			}
		})
	}
}

func TestDeleteClear(t *testing.T) {
	m := New[string, int](time.Minute, 0)
	for i := range 3 {
		m.Set(strconv.Itoa(i), i, t0)
	}
	m.Delete("1")
	if _, ok := m.Get("1", t0); ok {
		t.Error("deleted key found")
	}
	if _, ok := m.Get("2", t0); !ok {
		t.Error("Delete dropped another key")
	}
	m.Clear()
	if n := m.Len(); n != 0 {
		t.Errorf("Len after Clear = %d", n)
	}
}

// A full map drops its expired entries first, and everything only when none has expired.
func TestFull(t *testing.T) {
	tests := []struct {
		name     string
		olds     int // entries set at t0, expired by the time of the new Set
		news     int // entries set at t0+1m, still fresh then
		wantLen  int // after the new Set
		wantNews bool
	}{
		{"room left", 1, 1, 3, true},
		{"expired entries go", 2, 2, 3, true},
		{"nothing expired: everything goes", 0, 4, 1, false},
		{"all expired", 4, 0, 1, false},
	}
	const max, ttl = 4, 90 * time.Second
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New[string, int](ttl, max)
			for i := range tt.olds {
				m.Set("old"+strconv.Itoa(i), i, t0)
			}
			for i := range tt.news {
				m.Set("new"+strconv.Itoa(i), i, t0.Add(time.Minute))
			}
			now := t0.Add(ttl) // the olds have just expired
			m.Set("last", 0, now)
			if n := m.Len(); n != tt.wantLen {
				t.Errorf("Len = %d, want %d", n, tt.wantLen)
			}
			if _, ok := m.Get("last", now); !ok {
				t.Error("the entry just set is missing")
			}
			if tt.news > 0 {
				if _, ok := m.Get("new0", now); ok != tt.wantNews {
					t.Errorf("fresh entry kept = %v, want %v", ok, tt.wantNews)
				}
			}
		})
	}
}

// Get allocates nothing, whatever the key and value types (the gateway's credential lookup is one).
func TestGetAllocs(t *testing.T) {
	type value struct {
		user string
		n    int
	}
	m := New[[32]byte, value](time.Minute, 10)
	var k [32]byte
	k[0] = 1
	m.Set(k, value{user: "demo", n: 1}, t0)
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := m.Get(k, t0); !ok {
			t.Fatal("not found")
		}
	}); n != 0 {
		t.Errorf("Get allocates %v times", n)
	}
}

// Concurrent Gets, Sets, Deletes and Clears (run with -race).
func TestConcurrent(t *testing.T) {
	m := New[int, int](time.Minute, 64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				k := (g*1000 + i) % 100
				now := t0.Add(time.Duration(i) * time.Millisecond)
				switch i % 10 {
				case 0:
					m.Delete(k)
				case 1:
					if g == 0 {
						m.Clear()
					}
				case 2, 3, 4:
					m.Set(k, i, now)
				default:
					if v, ok := m.Get(k, now); ok && (v < 0 || v >= 1000) {
						t.Errorf("Get(%d) = %d, a value never set", k, v)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := m.Len(); n > 64 {
		t.Errorf("Len = %d, above the bound", n)
	}
}

func BenchmarkGet(b *testing.B) {
	m := New[[32]byte, string](time.Minute, 0)
	var k [32]byte
	m.Set(k, "demo", t0)
	b.ReportAllocs()
	for b.Loop() {
		m.Get(k, t0)
	}
}

// TestRenew: Renew extends a live entry from the renewal on, and never brings back one that was deleted or has
// expired.
func TestRenew(t *testing.T) {
	tests := []struct {
		name      string
		delete    bool
		renewAt   time.Duration // after t0; the entry was set at t0 with a TTL of a minute
		wantRenew bool
		getAt     time.Duration
		wantOK    bool
	}{
		{"live entry renewed", false, 40 * time.Second, true, 90 * time.Second, true},
		{"renewed entry expires a TTL after the renewal", false, 40 * time.Second, true, 100 * time.Second, false},
		{"deleted entry stays deleted", true, 10 * time.Second, false, 20 * time.Second, false},
		{"expired entry not renewed", false, time.Minute, false, 61 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New[string, int](time.Minute, 10)
			m.Set("k", 1, t0)
			if tt.delete {
				m.Delete("k")
			}
			if got := m.Renew("k", 2, t0.Add(tt.renewAt)); got != tt.wantRenew {
				t.Fatalf("Renew = %v, want %v", got, tt.wantRenew)
			}
			if _, ok := m.Get("k", t0.Add(tt.getAt)); ok != tt.wantOK {
				t.Errorf("Get after = %v, want %v", ok, tt.wantOK)
			}
		})
	}
}

// TestAddKeepsOpenEntries fills a map with Add and checks that a full map refuses new keys rather than drop an
// entry that has not expired, still replaces a key it holds, and takes new keys again once entries expire.
func TestAddKeepsOpenEntries(t *testing.T) {
	const ttl = time.Minute
	m := New[string, int](ttl, 3)
	for i := range 3 {
		if !m.Add(strconv.Itoa(i), i, t0.Add(time.Duration(i)*20*time.Second)) {
			t.Fatalf("Add %d to a map with room refused", i)
		}
	}
	if m.Add("new", 9, t0.Add(45*time.Second)) {
		t.Error("Add to a full map of open entries took a new key")
	}
	if !m.Add("1", 11, t0.Add(45*time.Second)) {
		t.Error("Add refused to replace a key the full map holds")
	}
	for i := range 3 {
		if _, ok := m.Get(strconv.Itoa(i), t0.Add(50*time.Second)); !ok {
			t.Errorf("open entry %d was dropped", i)
		}
	}
	// Entry 0 expires at t0+ttl: then there is room for one key.
	at := t0.Add(ttl + 5*time.Second)
	if !m.Add("new", 9, at) {
		t.Error("Add refused a key after an entry expired")
	}
	if m.Add("newer", 9, at) {
		t.Error("Add took a second key where one entry expired")
	}
	if _, ok := m.Get("1", at); !ok {
		t.Error("the renewed entry was dropped")
	}
}
