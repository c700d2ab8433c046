package tick

import (
	"testing"
	"time"
)

// TestEveryStops: Every calls f once per tick and returns once stop is closed, here by f itself at its third
// call, so that no call comes after.
func TestEveryStops(t *testing.T) {
	stop := make(chan struct{})
	calls := 0
	Every(stop, time.Millisecond, func() {
		calls++
		if calls == 3 {
			close(stop)
		}
	})
	if calls != 3 {
		t.Errorf("f called %d times, want 3 (the last closed stop)", calls)
	}
}
