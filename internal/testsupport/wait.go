package testsupport

import "time"

// WaitUntil polls cond every few milliseconds until it holds or limit passes, and reports whether it held
// (asked once more at the end). limit is a bound on correctness, never a measure of speed: a test that fails
// on it reports what did not happen, not that it was slow.
func WaitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}
