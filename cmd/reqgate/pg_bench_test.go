package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/core/postgres"
	"github.com/reqgate/reqgate/core/postgres/pgtest"
	"github.com/reqgate/reqgate/core/sqlite"
	"github.com/reqgate/reqgate/core/storemetrics"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/gatewaytest"
)

// Benchmarks of the core over HTTP on PostgreSQL against SQLite in one run, and writes through one
// gateway to one or two core replicas sharing one PostgreSQL database. Everything runs in this process on
// loopback (each replica with its own store and connection pool), so the machine's 2 cores are shared by
// clients, gateway, cores and the database server alike.

const benchRecordCount = 10000

// benchProvision is an account "bench" with one user and benchRecordCount requirements.
func benchProvision(b *testing.B) *core.Provision {
	b.Helper()
	accounts.BcryptCost = bcrypt.MinCost
	p, err := accounts.Parse("bench.yaml", []byte(`
accounts:
  - api_key: bench
    name: Bench
    users:
      - {id: 1, username: writer, password: writer, email: w@bench.test, firstname: W, lastname: R}
`))
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]core.RecordSpec, benchRecordCount)
	for i := range recs {
		recs[i] = core.RecordSpec{Kind: "re", ID: int64(i + 1), CreatedByUsername: "writer", CreatedTime: 1_700_000_000,
			Values: map[int64]string{101: "Requirement " + strconv.Itoa(i+1),
				102: "<p>Some <b>rich</b> text of requirement " + strconv.Itoa(i+1) + "</p>", 103: strconv.Itoa(i%3 + 1)}}
	}
	p.Accounts[0].Records = recs
	return p
}

// benchStores returns a SQLite store and a PostgreSQL store holding the same bench account: applied to
// SQLite, then copied into PostgreSQL with Export and Import (COPY), which is how an operator moves.
func benchStores(b *testing.B) (lite *sqlite.Store, pgDSN string) {
	b.Helper()
	ctx := context.Background()
	lite, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "core.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	if err := lite.Apply(ctx, benchProvision(b)); err != nil {
		b.Fatal(err)
	}
	snap, err := lite.Export(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	pgDSN = pgtest.Shared(b).NewDatabase(b)
	pg, err := postgres.Open(ctx, pgDSN)
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close()
	if err := pg.Import(ctx, snap, false); err != nil {
		b.Fatal(err)
	}
	return lite, pgDSN
}

func openPG(b *testing.B, dsn string) *postgres.Store {
	b.Helper()
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// serveCore serves the core API of st on a loopback port.
func serveCore(b *testing.B, st core.Store) string {
	b.Helper()
	h, err := api.New(storemetrics.Wrap(st), coretest.APIOptions())
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv.URL
}

// hammer runs fn from 8 parallel clients per CPU and reports requests/s.
func hammer(b *testing.B, fn func(c *http.Client, rng *rand.Rand) error) {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	defer c.CloseIdleConnections()
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		for pb.Next() {
			if err := fn(c, rng); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

func benchDo(c *http.Client, method, url, body string, want int) error {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth("writer", "writer")
	if body != "" {
		req.Header.Set("Content-Type", "application/xml")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d, want %d", method, url, resp.StatusCode, want)
	}
	return nil
}

var benchSeq atomic.Int64

func postRecord(base string) func(c *http.Client, rng *rand.Rand) error {
	return func(c *http.Client, rng *rand.Rand) error {
		return benchDo(c, http.MethodPost, base+"/api2/bench/re",
			titleBody("bench"+strconv.FormatInt(benchSeq.Add(1), 10)), http.StatusCreated)
	}
}

func getRecord(base string) func(c *http.Client, rng *rand.Rand) error {
	return func(c *http.Client, rng *rand.Rand) error {
		return benchDo(c, http.MethodGet, base+"/api2/bench/re/"+strconv.Itoa(1+rng.IntN(benchRecordCount)), "",
			http.StatusOK)
	}
}

// BenchmarkCoreStores measures GET and POST of one record over HTTP (core/api) on SQLite and on
// PostgreSQL, 10,000 records stored, in one run.
func BenchmarkCoreStores(b *testing.B) {
	lite, dsn := benchStores(b)
	urls := map[string]string{"sqlite": serveCore(b, lite), "postgres": serveCore(b, openPG(b, dsn))}
	for _, store := range []string{"postgres", "sqlite"} {
		b.Run(store+"/get", func(b *testing.B) { hammer(b, getRecord(urls[store])) })
		b.Run(store+"/post", func(b *testing.B) { hammer(b, postRecord(urls[store])) })
	}
}

// BenchmarkReplicaWrites measures POSTs through one gateway to one and to two core replicas sharing one
// PostgreSQL database (each replica its own store, pool and HTTP server); the ratio of the two is the
// scaling the issue asks about.
func BenchmarkReplicaWrites(b *testing.B) {
	_, dsn := benchStores(b)
	cores := []string{serveCore(b, openPG(b, dsn)), serveCore(b, openPG(b, dsn))}
	for _, n := range []int{1, 2} {
		b.Run("replicas="+strconv.Itoa(n), func(b *testing.B) {
			gw, err := gateway.New(gatewaytest.With(gateway.Options{Upstreams: cores[:n]}))
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			go gw.Serve(ln)
			defer gw.Shutdown(context.Background())
			hammer(b, postRecord("http://"+ln.Addr().String()))
		})
	}
}

// BenchmarkStoreCopy measures `reqgate store copy` of one account of 10,000 requirements (with their
// history and search terms) from SQLite into PostgreSQL: Export, then Import in one transaction (COPY).
func BenchmarkStoreCopy(b *testing.B) {
	ctx := context.Background()
	lite, _ := benchStores(b)
	srv := pgtest.Shared(b)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dst := openPG(b, srv.NewDatabase(b))
		b.StartTimer()
		snap, err := lite.Export(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := dst.Import(ctx, snap, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRecordCount*b.N)/b.Elapsed().Seconds(), "records/s")
}
