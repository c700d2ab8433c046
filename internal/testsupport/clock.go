package testsupport

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand; its Now goes where the code under test takes a clock (an Options.Now).
// It is safe for the goroutines of the code under test.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a Clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
