package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/storetest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// The benchmark data: the storetest fixture plus 100 users and a Product picklist of 100 options on re, and n
// requirements: record i (1-based) is created at base+i seconds by user 1000+i%100, status i%3+1, product
// i%100+1, platforms a subset of 1..3, owner a user, title "Rec<i>", a description of 200 bytes.
const (
	benchBase    = 1_600_000_000
	benchUsers   = 100
	benchProduct = 107
)

func benchProvision() *core.Provision {
	p := storetest.Fixture()
	a := &p.Accounts[0]
	for i := range benchUsers {
		a.Users = append(a.Users, core.UserSpec{User: core.User{ID: int64(1000 + i), Username: fmt.Sprintf("u%d", i)}})
	}
	opts := make([]core.Option, 100)
	for i := range opts {
		opts[i] = core.Option{Value: int64(i + 1), Label: fmt.Sprintf("Product %d", i+1), Sort: i + 1}
	}
	a.Fields[core.KindRequirement] = append(a.Fields[core.KindRequirement], core.Field{ID: benchProduct,
		Label: "Product", Type: core.TypePickOne, SpecialPurpose: "product", Sort: 7, ListType: core.ListNormal,
		Options: opts})
	a.Records, a.Relationships, a.Views = nil, nil, nil
	return p
}

var benchDesc = "<p>" + strings.Repeat("x", 193) + "</p>"

func benchRecord(i int) core.Record {
	plat := []string{"1", "2", "3", "1,2", "1,3", "2,3", "1,2,3"}[i%7]
	return core.Record{Kind: core.KindRequirement, ID: int64(i), Version: 1,
		CreatedTime: int64(benchBase + i), CreatedBy: int64(1000 + i%benchUsers),
		LastUpdatedTime: int64(benchBase + i), LastUpdatedBy: int64(1000 + i%benchUsers),
		Values: map[int64]string{101: "Rec" + strconv.Itoa(i), 102: benchDesc, 103: strconv.Itoa(i%3 + 1),
			104: strconv.Itoa(1000 + (i*7)%benchUsers), 105: plat, benchProduct: strconv.Itoa(i%100 + 1)}}
}

// bulkLoad adds records 1..n of benchRecord to the account in one transaction (an Import over the account),
// with their terms, and raises the counter.
func bulkLoad(tb testing.TB, s *Store, account int64, n int) {
	tb.Helper()
	ctx := context.Background()
	snap, err := s.Export(ctx, "acme")
	if err != nil {
		tb.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		snap.Records = append(snap.Records, benchRecord(i))
	}
	snap.Counters[core.KindRequirement] = max(snap.Counters[core.KindRequirement], int64(n))
	if err := s.Import(ctx, snap, true); err != nil {
		tb.Fatal(err)
	}
}

var (
	benchDir  string
	benchOnce = map[int]*sync.Once{}
	benchMu   sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchStore returns a store holding n benchmark records, built once per process (a fresh copy when fresh is
// set, for benchmarks that write).
func benchStore(b *testing.B, n int, fresh bool) (*Store, int64) {
	b.Helper()
	benchMu.Lock()
	if benchDir == "" {
		d, err := os.MkdirTemp("", "reqgate-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	path := filepath.Join(benchDir, fmt.Sprintf("bench-%d.db", n))
	if fresh {
		path = filepath.Join(b.TempDir(), "bench.db")
	}
	once := benchOnce[n]
	if once == nil || fresh {
		once = &sync.Once{}
		if !fresh {
			benchOnce[n] = once
		}
	}
	benchMu.Unlock()
	ctx := context.Background()
	once.Do(func() {
		start := time.Now()
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Apply(ctx, benchProvision()); err != nil {
			b.Fatal(err)
		}
		a, err := s.Account(ctx, "acme")
		if err != nil {
			b.Fatal(err)
		}
		bulkLoad(b, s, a.ID, n)
		// Give record 1 a field history of 50 changes.
		for i := range 50 {
			if _, err := s.UpdateRecord(ctx, a.ID, core.KindRequirement, 1, core.Unconditional(core.Update{UserID: 1000,
				Time: benchBase + int64(n+i), Values: map[int64]string{103: strconv.Itoa(i%3 + 1)}})); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.Logf("built %d records in %v", n, time.Since(start).Round(time.Millisecond))
	})
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	a, err := s.Account(ctx, "acme")
	if err != nil {
		b.Fatal(err)
	}
	return s, a.ID
}

// measure runs op b.N times and reports the 50th, 95th and 99th percentile of its latency next to ns/op.
func measure(b *testing.B, op func(i int) error) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

// parallel runs op from GOMAXPROCS*4 goroutines (like concurrent HTTP requests) and reports ops/s and
// latency percentiles.
func parallel(b *testing.B, op func(r *rand.Rand) error) {
	b.Helper()
	b.ReportAllocs()
	all, elapsed := testsupport.ParallelLatencies(b, 4, func() func() error {
		r := rand.New(rand.NewPCG(rand.Uint64(), 1))
		return func() error { return op(r) }
	})
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "ops/s")
	reportPercentiles(b, all)
}

func BenchmarkRecord(b *testing.B) {
	s, a := benchStore(b, 10_000, false)
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		measure(b, func(i int) error {
			_, err := s.Record(ctx, a, core.KindRequirement, int64(i%10_000+1))
			return err
		})
	})
	b.Run("parallel", func(b *testing.B) {
		parallel(b, func(r *rand.Rand) error {
			_, err := s.Record(ctx, a, core.KindRequirement, r.Int64N(10_000)+1)
			return err
		})
	})
}

func BenchmarkFields(b *testing.B) {
	s, a := benchStore(b, 10_000, false)
	ctx := context.Background()
	measure(b, func(int) error {
		_, err := s.Fields(ctx, a, core.KindRequirement)
		return err
	})
}

func BenchmarkCreateRecord(b *testing.B) {
	ctx := context.Background()
	newRec := func(i int) core.Record {
		r := benchRecord(10_000 + i)
		r.ID = 0
		return r
	}
	b.Run("serial", func(b *testing.B) {
		s, a := benchStore(b, 10_000, true)
		measure(b, func(i int) error {
			_, err := s.CreateRecord(ctx, a, newRec(i))
			return err
		})
	})
	b.Run("parallel", func(b *testing.B) {
		s, a := benchStore(b, 10_000, true)
		parallel(b, func(r *rand.Rand) error {
			_, err := s.CreateRecord(ctx, a, newRec(r.IntN(1000)))
			return err
		})
	})
}

func BenchmarkUpdateRecord(b *testing.B) {
	ctx := context.Background()
	s, a := benchStore(b, 10_000, true)
	measure(b, func(i int) error {
		_, err := s.UpdateRecord(ctx, a, core.KindRequirement, int64(i%10_000+1), core.Unconditional(core.Update{UserID: 1000,
			Time: benchBase + 200_000 + int64(i), Values: map[int64]string{103: strconv.Itoa(i%3 + 1),
				101: "Upd" + strconv.Itoa(i)}}))
		return err
	})
}

// BenchmarkSearch100k searches 100,000 requirements of one account. Result sizes: picklist-1pct, created_by
// and time-range about 1,000 records; view-1000 exactly 1,000; picklist-33pct about 33,000.
func BenchmarkSearch100k(b *testing.B) {
	s, a := benchStore(b, 100_000, false)
	ctx := context.Background()
	fields, err := s.Fields(ctx, a, core.KindRequirement)
	if err != nil {
		b.Fatal(err)
	}
	tests := []struct {
		name, conds string
		want        int // expected result size, a check that the data is what the name says
	}{
		{"picklist-1pct", "field_107=42", 1000},
		{"multi-picklist", "field_105=2&field_107=42", 571},
		{"created_by", "created_by=1042", 1000},
		{"time-range", "created_time>1600050000&created_time<1600051001", 1000},
		{"view-1000", "last_updated_time>1600070000&last_updated_time<1600071001", 1000},
		{"textbox", "field_101=Rec77777", 1},
		{"picklist-33pct", "field_103=2", 33333},
	}
	for _, tc := range tests {
		conds, err := core.ParseConditions(tc.conds)
		if err != nil {
			b.Fatal(err)
		}
		if err := core.CheckConditions(conds, fields); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			ms, err := s.Search(ctx, a, core.KindRequirement, conds)
			if err != nil {
				b.Fatal(err)
			}
			if len(ms) < tc.want*9/10 || len(ms) > tc.want*11/10+1 {
				b.Fatalf("%s: %d results, want about %d", tc.conds, len(ms), tc.want)
			}
			measure(b, func(int) error {
				_, err := s.Search(ctx, a, core.KindRequirement, conds)
				return err
			})
		})
	}
}

func BenchmarkHistory100k(b *testing.B) {
	s, a := benchStore(b, 100_000, false)
	ctx := context.Background()
	h, err := s.History(ctx, a, core.KindRequirement, 1, 103)
	if err != nil || len(h) < 30 {
		b.Fatalf("History: %d entries, %v", len(h), err)
	}
	measure(b, func(int) error {
		_, err := s.History(ctx, a, core.KindRequirement, 1, 103)
		return err
	})
}

func BenchmarkRecord100k(b *testing.B) {
	s, a := benchStore(b, 100_000, false)
	ctx := context.Background()
	measure(b, func(i int) error {
		_, err := s.Record(ctx, a, core.KindRequirement, int64((i*7919)%100_000+1))
		return err
	})
}
