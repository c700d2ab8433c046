// Package striped counts what every request counts without making the requests share a cache line.
//
// An atomic counter that goroutines on several CPUs add to moves its cache line from CPU to CPU on every add,
// which costs more than the add itself; a mutex costs that and more. Here a counter is split into stripes, each
// on a cache line of its own, and each writer adds to the stripe it was given: the gateway gives every client
// connection one, so requests running at the same time on two CPUs seldom write the same line. A read sums the
// stripes; it is exact once the writers are done and, for a counter, never runs backwards.
package striped

import (
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// Stripes is how many stripes a value has: more than the CPUs of the machines it runs on, so that the
// connections busy at one moment seldom share one.
const Stripes = 16

// cacheLine is the size the stripes are spread by: two values this far apart are never in one line.
const cacheLine = 64

type uintStripe struct {
	n atomic.Uint64
	_ [cacheLine - 8]byte
}

// Counter is a count that only grows. The zero value is ready.
type Counter struct{ s [Stripes]uintStripe }

// Add adds n on stripe (any number: it is taken modulo Stripes).
func (c *Counter) Add(stripe uint32, n uint64) { c.s[stripe%Stripes].n.Add(n) }

// Inc adds one on stripe.
func (c *Counter) Inc(stripe uint32) { c.s[stripe%Stripes].n.Add(1) }

// Next adds one on stripe and returns a number that no other Next of c returns (for ids): the stripe's count
// before the add, times Stripes, plus the stripe.
func (c *Counter) Next(stripe uint32) uint64 {
	s := stripe % Stripes
	return (c.s[s].n.Add(1)-1)*Stripes + uint64(s)
}

// Load is the count.
func (c *Counter) Load() uint64 {
	var n uint64
	for i := range c.s {
		n += c.s[i].n.Load()
	}
	return n
}

// Int is a count that goes up and down (what is in progress). The zero value is ready. It is a Counter added
// to in two's complement: the stripes' sum wraps to the signed total.
type Int struct{ c Counter }

// Add adds n (which may be negative) on stripe. An Add and the Add that undoes it may use different stripes.
func (i *Int) Add(stripe uint32, n int64) { i.c.Add(stripe, uint64(n)) }

// Load is the sum: read while writers run, it may mix earlier and later adds.
func (i *Int) Load() int64 { return int64(i.c.Load()) }

// Histogram counts durations in buckets with fixed upper bounds, as a Prometheus histogram does.
type Histogram struct {
	bounds []time.Duration // ascending upper bounds; one more bucket (+Inf) past the last
	s      [Stripes]histStripe
}

// maxBuckets is the most buckets a histogram has, +Inf included.
const maxBuckets = 15

type histStripe struct {
	buckets [maxBuckets]atomic.Uint64
	sum     atomic.Uint64 // nanoseconds
	_       [cacheLine]byte
}

// NewHistogram returns a histogram with the ascending upper bounds given (at most maxBuckets-1 of them).
func NewHistogram(bounds []time.Duration) *Histogram {
	if len(bounds) >= maxBuckets {
		panic("striped: too many buckets")
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] <= bounds[i-1] {
			panic("striped: bounds not ascending")
		}
	}
	return &Histogram{bounds: bounds}
}

// Observe counts d on stripe. A negative d counts as zero.
func (h *Histogram) Observe(stripe uint32, d time.Duration) {
	d = max(d, 0)
	i := 0
	for i < len(h.bounds) && d > h.bounds[i] {
		i++
	}
	s := &h.s[stripe%Stripes]
	s.buckets[i].Add(1)
	s.sum.Add(uint64(d))
}

// Snapshot is a histogram's counts at one reading.
type Snapshot struct {
	Bounds     []time.Duration
	Cumulative []uint64 // per bound, the observations at or below it
	Count      uint64   // all observations (the +Inf bucket)
	Sum        time.Duration
}

// Snapshot reads the histogram.
func (h *Histogram) Snapshot() Snapshot {
	var per [maxBuckets]uint64
	var sum uint64
	for i := range h.s {
		s := &h.s[i]
		for j := 0; j <= len(h.bounds); j++ {
			per[j] += s.buckets[j].Load()
		}
		sum += s.sum.Load()
	}
	snap := Snapshot{Bounds: h.bounds, Cumulative: make([]uint64, len(h.bounds)), Sum: time.Duration(sum)}
	var run uint64
	for j := range h.bounds {
		run += per[j]
		snap.Cumulative[j] = run
	}
	snap.Count = run + per[len(h.bounds)]
	return snap
}

// WritePrometheus writes the snapshot in the Prometheus text format as the histogram name with labels (the
// label pairs without braces, e.g. `route="record"`; may be empty): name_bucket per bound and +Inf, name_sum
// in seconds, name_count.
func (s Snapshot) WritePrometheus(w io.Writer, name, labels string) {
	b := make([]byte, 0, 128*(len(s.Bounds)+3))
	sep := ""
	if labels != "" {
		sep = ","
	}
	bucket := func(le string, n uint64) {
		b = append(b, name...)
		b = append(b, "_bucket{"...)
		b = append(b, labels...)
		b = append(b, sep...)
		b = append(b, `le="`...)
		b = append(b, le...)
		b = append(b, `"} `...)
		b = strconv.AppendUint(b, n, 10)
		b = append(b, '\n')
	}
	for i, bound := range s.Bounds {
		bucket(strconv.FormatFloat(bound.Seconds(), 'g', -1, 64), s.Cumulative[i])
	}
	bucket("+Inf", s.Count)
	for _, part := range []string{"_sum", "_count"} {
		b = append(b, name...)
		b = append(b, part...)
		if labels != "" {
			b = append(b, '{')
			b = append(b, labels...)
			b = append(b, '}')
		}
		b = append(b, ' ')
		if part == "_sum" {
			b = strconv.AppendFloat(b, s.Sum.Seconds(), 'g', -1, 64)
		} else {
			b = strconv.AppendUint(b, s.Count, 10)
		}
		b = append(b, '\n')
	}
	_, _ = w.Write(b)
}
