// Package tick runs the periodic work of the process's long-lived goroutines (the SQLite checkpointer, the
// gateway's health probes, the invalidation bus's Redis ping): a function at each tick of an interval until
// the goroutine is told to stop.
package tick

import "time"

// Every calls f at each tick of interval, the first an interval after it is called, until stop is closed,
// and returns then: no call starts once stop is closed, even if a tick came meanwhile. Ticks that come while f
// runs are dropped (time.Ticker), so a slow f delays the next call rather than piling calls up.
func Every(stop <-chan struct{}, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			select {
			case <-stop: // both were ready, and select picks at random
				return
			default:
			}
		}
		f()
	}
}
