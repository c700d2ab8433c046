package api_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core"
	"github.com/reqgate/reqgate/core/api"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// benchRecords is how many records the benchmarks store before measuring.
const benchRecords = 10000

// startBench runs the API with benchRecords requirements stored (seeded in one transaction).
func startBench(b *testing.B) *env {
	e := start(b, api.Options{})
	recs := make([]core.RecordSpec, benchRecords)
	for i := range recs {
		recs[i] = core.RecordSpec{Kind: "re", ID: int64(i + 1), CreatedByUsername: "alice", Values: map[int64]string{
			101: "Requirement " + strconv.Itoa(i+1),
			102: "<p>Some <b>rich</b> text of requirement " + strconv.Itoa(i+1) + "</p>",
			103: strconv.Itoa(i%3 + 1),
			104: "6",
			105: "1,3",
			106: strconv.Itoa(i),
		}}
	}
	p := testProvision(b)
	p.Accounts = p.Accounts[:1]
	p.Accounts[0].Records = recs
	if err := e.Store.Apply(context.Background(), p); err != nil {
		b.Fatalf("seed: %v", err)
	}
	return e
}

// benchClient is an HTTP client that keeps a connection per parallel client.
func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
}

// runParallel measures fn over parallel clients (4 per core) and reports requests/s and latency
// percentiles.
func runParallel(b *testing.B, fn func(c *http.Client, rng *rand.Rand) error) {
	client := benchClient()
	defer client.CloseIdleConnections()
	b.ReportAllocs()
	cpu0 := cpuTime()
	lat, elapsed := testsupport.ParallelLatencies(b, 4, func() func() error {
		rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		return func() error { return fn(client, rng) }
	})
	cpu := cpuTime() - cpu0
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	// CPU per request (server and client together, both in this process): the figure that decides the
	// throughput of an otherwise idle machine, and one that other load on a shared machine disturbs less
	// than wall-clock rates.
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-us/req")
}

// cpuTime is the user plus system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func doBench(c *http.Client, r *http.Request, want int) error {
	res, err := c.Do(r)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	if res.StatusCode != want {
		return &statusErr{res.StatusCode, want}
	}
	return nil
}

type statusErr struct{ got, want int }

func (e *statusErr) Error() string {
	return "status " + strconv.Itoa(e.got) + ", want " + strconv.Itoa(e.want)
}

// BenchmarkGetRecord: GET /api2/acme/re/{random id} over loopback HTTP, 10k records stored. The store is
// seeded once, outside the measured sub-benchmark.
func BenchmarkGetRecord(b *testing.B) {
	e := startBench(b)
	b.Run("10k", func(b *testing.B) {
		runParallel(b, func(c *http.Client, rng *rand.Rand) error {
			r, _ := http.NewRequest("GET", e.URL+"/api2/acme/re/"+strconv.Itoa(rng.IntN(benchRecords)+1), nil)
			r.SetBasicAuth("alice", "alice-secret")
			return doBench(c, r, http.StatusOK)
		})
	})
}

// BenchmarkPostRecord: POST /api2/acme/re over loopback HTTP, 10k records stored.
func BenchmarkPostRecord(b *testing.B) {
	e := startBench(b)
	const rec = `<requirement><fields><field><name>field_101</name><value>New requirement</value></field>` +
		`<field><name>field_102</name><value><![CDATA[<p>Created by the <b>benchmark</b></p>]]></value></field>` +
		`<field><name>field_103</name><value>2</value></field><field><name>field_104</name><value>5</value></field>` +
		`<field><name>field_105</name><value>1,2</value></field></fields></requirement>`
	b.Run("10k", func(b *testing.B) {
		runParallel(b, func(c *http.Client, rng *rand.Rand) error {
			r, _ := http.NewRequest("POST", e.URL+"/api2/acme/re", strings.NewReader(rec))
			r.SetBasicAuth("alice", "alice-secret")
			r.Header.Set("Content-Type", "application/xml")
			return doBench(c, r, http.StatusCreated)
		})
	})
}

// BenchmarkPutRecord: PUT /api2/acme/re/{random id} over loopback HTTP, 10k records stored, as a plain update
// and with an Idempotency-Key (a new one per request: the receipt is written in the update's transaction).
func BenchmarkPutRecord(b *testing.B) {
	e := startBench(b)
	var seq atomic.Int64
	for _, keyed := range []bool{false, true} {
		name := "10k"
		if keyed {
			name = "10k-idempotency-key"
		}
		b.Run(name, func(b *testing.B) {
			runParallel(b, func(c *http.Client, rng *rand.Rand) error {
				n := seq.Add(1)
				body := `<requirement><fields><field><name>field_101</name><value>Title ` + strconv.FormatInt(n, 10) +
					`</value></field></fields></requirement>`
				r, _ := http.NewRequest("PUT", e.URL+"/api2/acme/re/"+strconv.Itoa(rng.IntN(benchRecords)+1),
					strings.NewReader(body))
				r.SetBasicAuth("alice", "alice-secret")
				r.Header.Set("Content-Type", "application/xml")
				if keyed {
					r.Header.Set("Idempotency-Key", "bench-"+strconv.FormatInt(n, 10))
				}
				return doBench(c, r, http.StatusOK)
			})
		})
	}
}
