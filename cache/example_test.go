package cache_test

import (
	"fmt"
	"time"

	"github.com/reqgate/reqgate/cache"
)

// A read is stored under a key that carries the account's generation; a write invalidates the account, and
// the same read then builds a new key that finds nothing.
func Example() {
	c, err := cache.New(cache.Options{MaxBytes: 1 << 20, TTL: 30 * time.Second, StaleIfError: 5 * time.Minute})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	key := c.Key("demo", "", 2, "/api2/demo/re/1", "", "xml")
	_ = c.Set(key, &cache.Entry{Status: 200, Body: []byte("<requirement/>")})
	if l, ok := c.Get(key); ok {
		fmt.Println("hit:", string(l.Entry.Body), l.Fresh)
	}
	c.Invalidate("demo")
	_, ok := c.Get(c.Key("demo", "", 2, "/api2/demo/re/1", "", "xml"))
	fmt.Println("after a write:", ok)
	// Output:
	// hit: <requirement/> true
	// after a write: false
}
