package cache_test

import (
	"fmt"
	"time"

	"github.com/reqgate/reqgate/cache"
)

// A read is stored under a key that carries the generations of what it shows; a write of one record makes
// that record's reads old (and its kind's lists, and related items), and the same read then builds a new key
// that finds nothing, while the reads of another record stay.
func Example() {
	c, err := cache.New(cache.Options{MaxBytes: 1 << 20, TTL: 30 * time.Second, StaleIfError: 5 * time.Minute})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	re1 := cache.Scope{Reads: cache.ReadsRecord, Kind: "re", ID: "1"}
	re2 := cache.Scope{Reads: cache.ReadsRecord, Kind: "re", ID: "2"}
	_ = c.Set(c.Key(re1, "demo", "", 2, "/api2/demo/re/1", "", "xml"), &cache.Entry{Status: 200, Body: []byte("<requirement/>")})
	_ = c.Set(c.Key(re2, "demo", "", 2, "/api2/demo/re/2", "", "xml"), &cache.Entry{Status: 200, Body: []byte("<requirement/>")})
	if l, ok := c.Get(c.Key(re1, "demo", "", 2, "/api2/demo/re/1", "", "xml")); ok {
		fmt.Println("hit:", string(l.Entry.Body), l.Fresh)
	}
	c.InvalidateWrite(cache.Write{Account: "demo", Kind: "re", ID: "1"})
	_, ok := c.Get(c.Key(re1, "demo", "", 2, "/api2/demo/re/1", "", "xml"))
	fmt.Println("re/1 after its write:", ok)
	_, ok = c.Get(c.Key(re2, "demo", "", 2, "/api2/demo/re/2", "", "xml"))
	fmt.Println("re/2 after the write of re/1:", ok)
	// Output:
	// hit: <requirement/> true
	// re/1 after its write: false
	// re/2 after the write of re/1: true
}
