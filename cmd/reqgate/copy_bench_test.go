package main

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/sqlite"
)

// copyBenchRecords is the size of the account BenchmarkStoreCopy100k copies.
const copyBenchRecords = 100_000

// copySource writes a SQLite store holding the account "bench" of benchProvision with copyBenchRecords
// requirements of distinct text (so that each has its own search terms), and returns its path. The records are
// imported, not applied one by one, to keep the setup short.
func copySource(b *testing.B) string {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "source.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	p := benchProvision(b)
	p.Accounts[0].Records = p.Accounts[0].Records[:1]
	if err := st.Apply(ctx, p); err != nil {
		b.Fatal(err)
	}
	snap, err := st.Export(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	first := snap.Records[0]
	snap.APIKey, snap.Records = "bench100k", make([]core.Record, copyBenchRecords)
	for i := range snap.Records {
		r := first
		r.ID = int64(i + 1)
		n := strconv.Itoa(i + 1)
		r.Values = map[int64]string{101: "Requirement " + n, 102: "<p>Some <b>rich</b> text of requirement " + n + "</p>",
			103: strconv.Itoa(i%3 + 1)}
		snap.Records[i] = r
	}
	snap.Counters = map[string]int64{"re": copyBenchRecords}
	if err := st.Import(ctx, snap, false); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkStoreCopy100k measures `reqgate store copy` (storeCopy: open both stores, export, import in one
// transaction, rebuild the search terms) of an account of 100,000 requirements from SQLite into a new SQLite
// file and into a new PostgreSQL database. The source also holds the 1-record account "bench".
func BenchmarkStoreCopy100k(b *testing.B) {
	src := copySource(b)
	targets := []struct {
		name string
		new  func(b *testing.B) string
	}{
		{"sqlite-to-sqlite", func(b *testing.B) string { return filepath.Join(b.TempDir(), "target.db") }},
		{"sqlite-to-postgres", func(b *testing.B) string { return pgtest.Shared(b).NewDatabase(b) }},
	}
	for _, tt := range targets {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dst := tt.new(b)
				b.StartTimer()
				if err := storeCopy(context.Background(), src, dst, []string{"bench100k"}, false, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(copyBenchRecords*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
