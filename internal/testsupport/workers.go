package testsupport

import "sync"

// Workers runs n workers, each on a goroutine of its own, calling f(w, i) (w the worker, 0 to n-1; i its
// round, 0, 1, 2, ...) until f returns false or stop is called. stop ends the rounds and waits for every
// worker to return; call it once. f runs on goroutines of their own: it reports with t.Errorf, never t.Fatalf.
func Workers(n int, f func(w, i int) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if !f(w, i) {
					return
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}
