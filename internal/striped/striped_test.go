package striped

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCountsAddUp: adds from many goroutines on every stripe (and stripe numbers past Stripes) are all counted.
func TestCountsAddUp(t *testing.T) {
	var c Counter
	var in Int
	h := NewHistogram([]time.Duration{time.Millisecond, 10 * time.Millisecond})
	var wg sync.WaitGroup
	for g := range 40 {
		wg.Go(func() {
			for i := range 1000 {
				c.Inc(uint32(g))
				c.Add(uint32(g*7+i), 2)
				in.Add(uint32(g), 1)
				in.Add(uint32(g+i), -1) // undone on another stripe
				h.Observe(uint32(g), time.Duration(i%3)*5*time.Millisecond)
			}
		})
	}
	wg.Wait()
	if got := c.Load(); got != 40*1000*3 {
		t.Errorf("counter %d, want %d", got, 40*1000*3)
	}
	if got := in.Load(); got != 0 {
		t.Errorf("int %d, want 0", got)
	}
	s := h.Snapshot()
	// i%3: 0 -> 0 ms (<= 1 ms), 1 -> 5 ms (<= 10 ms), 2 -> 10 ms (<= 10 ms: a bound is inclusive).
	zeros := uint64(40 * 334)
	if s.Count != 40*1000 || s.Cumulative[0] != zeros || s.Cumulative[1] != 40*1000 {
		t.Errorf("snapshot %+v", s)
	}
	if want := time.Duration(40*333) * 15 * time.Millisecond; s.Sum != want {
		t.Errorf("sum %v, want %v", s.Sum, want)
	}
}

// TestWritePrometheus: the exposition is what Prometheus reads as a histogram (cumulative buckets, +Inf equal
// to the count, the sum in seconds), with and without labels.
func TestWritePrometheus(t *testing.T) {
	h := NewHistogram([]time.Duration{5 * time.Millisecond, time.Second, 2500 * time.Millisecond})
	for _, d := range []time.Duration{time.Millisecond, 500 * time.Millisecond, 3 * time.Second, -time.Second} {
		h.Observe(3, d)
	}
	var b strings.Builder
	h.Snapshot().WritePrometheus(&b, "x_seconds", `route="record"`)
	want := `x_seconds_bucket{route="record",le="0.005"} 2
x_seconds_bucket{route="record",le="1"} 3
x_seconds_bucket{route="record",le="2.5"} 3
x_seconds_bucket{route="record",le="+Inf"} 4
x_seconds_sum{route="record"} 3.501
x_seconds_count{route="record"} 4
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	NewHistogram([]time.Duration{time.Second}).Snapshot().WritePrometheus(&b, "y", "")
	if want := "y_bucket{le=\"1\"} 0\ny_bucket{le=\"+Inf\"} 0\ny_sum 0\ny_count 0\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// BenchmarkCounter compares a striped counter with one atomic under RunParallel (run with -cpu 2 or more):
// each goroutine keeps its stripe, as a connection does.
func BenchmarkCounter(b *testing.B) {
	b.Run("atomic", func(b *testing.B) {
		var n atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
	})
	b.Run("striped", func(b *testing.B) {
		var c Counter
		var next atomic.Uint32
		b.RunParallel(func(pb *testing.PB) {
			s := next.Add(1)
			for pb.Next() {
				c.Inc(s)
			}
		})
	})
}
