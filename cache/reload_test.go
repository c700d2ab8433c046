package cache

import (
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestSetTTL changes the TTL and StaleIfError of a cache that holds an entry: freshness and the stale
// stand-in follow the new values at once, for the entry stored before too.
func TestSetTTL(t *testing.T) {
	tests := []struct {
		name       string
		ttl, stale time.Duration // given to SetTTL
		age        time.Duration // of the entry when read
		wantFound  bool
		wantFresh  bool
		refused    bool // SetTTL refuses the values and the old ones stay
	}{
		{"unchanged fresh", 10 * time.Second, time.Minute, 9 * time.Second, true, true, false},
		{"shortened ttl", 2 * time.Second, time.Minute, 3 * time.Second, true, false, false},
		{"lengthened ttl", 20 * time.Second, time.Minute, 15 * time.Second, true, true, false},
		{"shortened stale", 2 * time.Second, 5 * time.Second, 8 * time.Second, false, false, false},
		{"never stale", 2 * time.Second, 0, 3 * time.Second, false, false, false},
		{"zero ttl refused", 0, time.Minute, 9 * time.Second, true, true, true},
		{"negative stale refused", 2 * time.Second, -1, 9 * time.Second, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testsupport.NewClock(time.Unix(1_700_000_000, 0))
			c := newCache(t, Options{TTL: 10 * time.Second, StaleIfError: time.Minute, Now: clk.Now})
			key := c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "", "xml")
			if err := c.Set(key, &Entry{Status: 200, Body: []byte("<requirement/>")}); err != nil {
				t.Fatal(err)
			}
			if err := c.SetTTL(tt.ttl, tt.stale); (err != nil) != tt.refused {
				t.Fatalf("SetTTL(%s, %s): %v, want refused=%v", tt.ttl, tt.stale, err, tt.refused)
			}
			clk.Add(tt.age)
			l, ok := c.Get(key)
			if ok != tt.wantFound || l.Fresh != tt.wantFresh {
				t.Errorf("found=%v fresh=%v, want %v %v", ok, l.Fresh, tt.wantFound, tt.wantFresh)
			}
		})
	}
}

// TestSetTTLWhileBusDown: while the bus is down the shorter bus-down freshness stays in force under a new
// TTL, and the new TTL applies once the bus is back.
func TestSetTTLWhileBusDown(t *testing.T) {
	clk := testsupport.NewClock(time.Unix(1_700_000_000, 0))
	c := newCache(t, Options{TTL: 10 * time.Second, BusDownTTL: time.Second, Now: clk.Now})
	key := c.Key(Scope{}, "demo", "", 2, "/api2/demo/re/1", "", "xml")
	if err := c.Set(key, &Entry{Status: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	c.SetBusUp(false)
	if err := c.SetTTL(20*time.Second, 0); err != nil {
		t.Fatal(err)
	}
	clk.Add(2 * time.Second)
	if l, _ := c.Get(key); l.Fresh {
		t.Error("fresh at 2s while the bus is down")
	}
	c.SetBusUp(true)
	clk.Add(13 * time.Second)
	if l, _ := c.Get(key); !l.Fresh {
		t.Error("not fresh at 15s under a TTL of 20s")
	}
}
