// Command openloop is the load test's open-loop generator: it sends GETs at a fixed rate whatever the server's
// answers do, and times each one from when it was due, not from when a connection was free to send it, so a
// server that falls behind pays for the queue it causes (no coordinated omission).
//
// Two engines. epoll (the default, Linux): one OS thread, a timerfd releasing each request at its due time and
// one epoll loop over raw sockets; light enough that one CPU offers tens of thousands of requests a second,
// and on time to about 0.1 ms. client: fasthttp's client under Go's scheduler, kept for comparison: Go's sleep
// wakes in whole milliseconds when its poller is idle, so it releases requests in bursts (timed from their
// release, its lateness reported apart). vegeta (net/http, a result encoded per request) could not offer these
// rates from one CPU, and wrk2 paces in whole milliseconds.
//
// Usage: openloop -url URL -rate N -duration D [-conns 64] [-engine epoll|client] [-H 'Name: value']...
// It prints one line: requests, errors, non-200 answers, achieved rate, the p50, p99, p999 and max latency, and
// the generator's own lateness.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	url := flag.String("url", "", "URL to GET")
	rate := flag.Int("rate", 1000, "requests per second")
	duration := flag.Duration("duration", 8*time.Second, "how long to send")
	conns := flag.Int("conns", 64, "connections (and so requests in flight at most)")
	engine := flag.String("engine", "epoll", "epoll (one thread, timerfd pacing; Linux) or client (fasthttp's client)")
	var hs headers
	flag.Var(&hs, "H", "request header `Name: value` (repeatable)")
	flag.Parse()
	if *url == "" || *rate <= 0 || *duration <= 0 || *conns <= 0 || *engine != "epoll" && *engine != "client" {
		flag.Usage()
		os.Exit(2)
	}
	runner := run
	if *engine == "epoll" {
		runner = runEpoll
	}
	r, err := runner(*url, hs, *rate, *duration, *conns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openloop:", err)
		os.Exit(1)
	}
	fmt.Println(r)
}

type result struct {
	lat             []time.Duration // from released to answered, sorted
	late            []time.Duration // from due to released by the dispatcher, sorted
	errs, non200    int
	elapsed         time.Duration
	firstErr        error
	offered, perSec int
}

func (r result) String() string {
	q := func(p float64) string {
		if len(r.lat) == 0 {
			return "-"
		}
		i := min(len(r.lat)-1, int(p*float64(len(r.lat))))
		return fmt.Sprintf("%.0f us", float64(r.lat[i])/float64(time.Microsecond))
	}
	s := fmt.Sprintf("%d requests at %d/s offered, %.0f/s answered, %d errors, %d not 200; p50 %s  p99 %s  p999 %s  max %s",
		r.offered, r.perSec, float64(len(r.lat))/r.elapsed.Seconds(), r.errs, r.non200, q(.5), q(.99), q(.999), q(1))
	if len(r.late) > 0 {
		s += fmt.Sprintf("; the generator's own lateness p99 %.0f us", float64(r.late[min(len(r.late)-1, len(r.late)*99/100)])/float64(time.Microsecond))
	}
	if r.firstErr != nil {
		s += fmt.Sprintf(" (first error: %v)", r.firstErr)
	}
	return s
}

// at is when request i of a run started at start is due.
func at(start time.Time, i, rate int) time.Time {
	return start.Add(time.Duration(int64(i) * int64(time.Second) / int64(rate)))
}

// waitUntil sleeps until t. A sleeping timer may wake late (up to a millisecond on a VM); requests are timed
// from when they were released, so that lateness is the generator's, not the server's, and is reported apart.
// (Spinning instead starves the workers' network polling when the generator has one CPU.)
func waitUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}

// run offers rate requests a second for d over conns connections. A dispatcher releases each request at its
// due time (in batches when it wakes late); conns workers send them as they come, so when every connection is
// busy the released requests wait in the queue and their wait is counted. How late the dispatcher itself was
// (a timer waking late) is reported beside and not counted.
func run(url string, hs headers, rate int, d time.Duration, conns int) (result, error) {
	req := fasthttp.AcquireRequest()
	req.SetRequestURI(url)
	for _, h := range hs {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return result{}, fmt.Errorf("header %q: want Name: value", h)
		}
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	client := &fasthttp.Client{MaxConnsPerHost: conns, MaxConnWaitTimeout: time.Minute,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}

	n := int(int64(rate) * int64(d) / int64(time.Second))
	due := make(chan time.Time, n)      // release times
	late := make([]time.Duration, 0, n) // how late the dispatcher released each request: its own share
	start := time.Now()
	go func() {
		defer close(due)
		for i := 0; i < n; {
			waitUntil(at(start, i, rate))
			now := time.Now()
			for ; i < n && !at(start, i, rate).After(now); i++ {
				late = append(late, now.Sub(at(start, i, rate)))
				due <- now
			}
		}
	}()

	type part struct {
		lat          []time.Duration
		errs, non200 int
		firstErr     error
	}
	parts := make([]part, conns)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Go(func() {
			p := &parts[w]
			p.lat = make([]time.Duration, 0, n/conns+1)
			rq := fasthttp.AcquireRequest()
			resp := fasthttp.AcquireResponse()
			req.CopyTo(rq)
			for t := range due {
				err := client.Do(rq, resp)
				if err != nil {
					p.errs++
					if p.firstErr == nil {
						p.firstErr = err
					}
					continue
				}
				p.lat = append(p.lat, time.Since(t))
				if resp.StatusCode() != fasthttp.StatusOK {
					p.non200++
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(late)
	r := result{elapsed: time.Since(start), offered: n, perSec: rate, late: late}
	for _, p := range parts {
		r.lat = append(r.lat, p.lat...)
		r.errs += p.errs
		r.non200 += p.non200
		if r.firstErr == nil {
			r.firstErr = p.firstErr
		}
	}
	slices.Sort(r.lat)
	if len(r.lat) == 0 {
		return r, errors.Join(errors.New("no request answered"), r.firstErr)
	}
	return r, nil
}
