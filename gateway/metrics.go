package gateway

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/internal/striped"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// Process-wide metrics (several gateways in one process, as in tests, add up).
var (
	authVerifications = metrics.GetOrCreateCounter(`reqgate_auth_verifications_total`)
	authFailures      = metrics.GetOrCreateCounter(`reqgate_auth_failures_total`)
	failureOverflows  = metrics.GetOrCreateCounter(`reqgate_auth_failure_overflows_total`)
	authBlocked       = metrics.GetOrCreateCounter(`reqgate_auth_blocked_total`)
	flightShared      = metrics.GetOrCreateCounter(`reqgate_gateway_singleflight_shared_total`)
	panicsTotal       = metrics.GetOrCreateCounter(`reqgate_gateway_panics_total`)
	upstreamRequests  = metrics.GetOrCreateCounter(`reqgate_gateway_upstream_requests_total`)
	connectionErrors  = metrics.GetOrCreateCounter(`reqgate_gateway_connection_errors_total`)
	readRetries       = metrics.GetOrCreateCounter(`reqgate_gateway_read_retries_total`)

	// The public listener's connection table (conns.go).
	refusedPerIP     = metrics.GetOrCreateCounter(`reqgate_gateway_connections_refused_total{reason="per_ip"}`)
	refusedPerPrefix = metrics.GetOrCreateCounter(`reqgate_gateway_connections_refused_total{reason="per_prefix"}`)
	refusedFull      = metrics.GetOrCreateCounter(`reqgate_gateway_connections_refused_total{reason="max_conns"}`)
	connsShed        = metrics.GetOrCreateCounter(`reqgate_gateway_connections_shed_total`)
	headTimeouts     = metrics.GetOrCreateCounter(`reqgate_gateway_header_timeouts_total`)
	idleTimeouts     = metrics.GetOrCreateCounter(`reqgate_gateway_connection_timeouts_total{phase="idle"}`)
	writeTimeouts    = metrics.GetOrCreateCounter(`reqgate_gateway_connection_timeouts_total{phase="write"}`)
	_                = metrics.GetOrCreateGauge(`reqgate_gateway_connections_open`, func() float64 { return float64(openConns.Load()) })

	// Requests answered instead of forwarded (deadline.go, inflight.go).
	expiredQueue    = metrics.GetOrCreateCounter(`reqgate_gateway_not_forwarded_total{reason="queue_timeout"}`)
	expiredGone     = metrics.GetOrCreateCounter(`reqgate_gateway_not_forwarded_total{reason="client_gone"}`)
	inflightRefused = metrics.GetOrCreateCounter(`reqgate_gateway_not_forwarded_total{reason="account_busy"}`)
	inflightWaited  = metrics.GetOrCreateCounter(`reqgate_gateway_account_queued_total`)

	// Request bodies (body.go, bodyshare.go).
	bodyBudgetRefused       = metrics.GetOrCreateCounter(`reqgate_gateway_body_budget_refused_total`)
	bodyTooSlow             = metrics.GetOrCreateCounter(`reqgate_gateway_body_too_slow_total`)
	bodyShareRefusedAccount = metrics.GetOrCreateCounter(`reqgate_gateway_body_share_refused_total{key="account"}`)
	bodyShareRefusedAddress = metrics.GetOrCreateCounter(`reqgate_gateway_body_share_refused_total{key="address"}`)

	// Failed logins (stranger.go, failures_redis.go).
	authDelayed        = metrics.GetOrCreateCounter(`reqgate_auth_delayed_total`)
	authDelayedRefused = metrics.GetOrCreateCounter(`reqgate_auth_delayed_refused_total`)
	failureStoreErrors = metrics.GetOrCreateCounter(`reqgate_auth_failure_store_errors_total`)
)

type requestLabels struct {
	route route.Class
	code  int
	cache string
}

// The request counters and duration histograms are striped (internal/striped): every request adds to them, from
// whichever CPU it runs on, and one atomic or one mutex for all would move its cache line between the CPUs on
// every request. Each connection adds on its own stripe. They are written by writeRequestMetrics.
var (
	requestCounters sync.Map // requestLabels -> *striped.Counter
	histograms      sync.Map // histogramKey -> *striped.Histogram
)

func init() { metrics.RegisterMetricsWriter(writeRequestMetrics) }

// durationBuckets are the Prometheus client's default buckets, as for the other histograms of the process.
var durationBuckets = func() []time.Duration {
	var b []time.Duration
	for _, s := range metrics.PrometheusHistogramDefaultBuckets {
		b = append(b, time.Duration(s*float64(time.Second)))
	}
	return b
}()

// metricsMemo is the request counter and histogram a connection's last request used, and the connection's
// stripe. The requests of one connection are mostly alike (route, status, cache result), and the memo spares
// each the lookups by label, which hash the labels (a third of a hit's accounting).
type metricsMemo struct {
	labels  requestLabels
	counter *striped.Counter
	request *striped.Histogram // reqgate_gateway_request_seconds{route=labels.route}
}

// observe counts a request that ended with code and took elapsed (upstream of it waiting for the upstream, 0 when
// it was not asked) in the request metrics, on stripe. m may be nil (a connection the gateway did not accept).
func (m *metricsMemo) observe(stripe uint32, r route.Class, code int, cache string, elapsed, upstream time.Duration) {
	if m == nil {
		m = new(metricsMemo)
	}
	if l := (requestLabels{r, code, cache}); m.counter == nil || m.labels != l {
		if m.request == nil || m.labels.route != r {
			m.request = histogram("request", r)
		}
		m.labels, m.counter = l, requestCounter(l)
	}
	m.counter.Inc(stripe)
	m.request.Observe(stripe, elapsed)
	if upstream > 0 {
		histogram("upstream", r).Observe(stripe, upstream)
	}
}

// requestCounter is reqgate_gateway_requests_total{route,code,cache}; the counters are looked up by a small
// struct so the hot path builds no strings.
func requestCounter(l requestLabels) *striped.Counter {
	if c, ok := requestCounters.Load(l); ok {
		return c.(*striped.Counter)
	}
	c, _ := requestCounters.LoadOrStore(l, new(striped.Counter))
	return c.(*striped.Counter)
}

type histogramKey struct {
	what string
	r    route.Class
}

// histogram returns reqgate_gateway_<what>_seconds{route} (Prometheus buckets, for histogram_quantile).
func histogram(what string, r route.Class) *striped.Histogram {
	key := histogramKey{what, r}
	if h, ok := histograms.Load(key); ok {
		return h.(*striped.Histogram)
	}
	h, _ := histograms.LoadOrStore(key, striped.NewHistogram(durationBuckets))
	return h.(*striped.Histogram)
}

// writeRequestMetrics writes the request counters and histograms in the Prometheus text format, each family
// once, its series sorted, as the metrics library writes its own.
func writeRequestMetrics(w io.Writer) {
	type counter struct {
		name string
		c    *striped.Counter
	}
	var cs []counter
	requestCounters.Range(func(k, c any) bool {
		l := k.(requestLabels)
		cache := l.cache
		if cache == "" {
			cache = "none"
		}
		name := `reqgate_gateway_requests_total{route="` + string(l.route) + `",code="` + strconv.Itoa(l.code) +
			`",cache="` + cache + `"}`
		cs = append(cs, counter{name, c.(*striped.Counter)})
		return true
	})
	if len(cs) > 0 {
		slices.SortFunc(cs, func(a, b counter) int { return strings.Compare(a.name, b.name) })
		metrics.WriteMetadataIfNeeded(w, "reqgate_gateway_requests_total", "counter")
		for _, c := range cs {
			fmt.Fprintf(w, "%s %d\n", c.name, c.c.Load())
		}
	}
	var hs []histogramKey
	histograms.Range(func(k, _ any) bool {
		hs = append(hs, k.(histogramKey))
		return true
	})
	slices.SortFunc(hs, func(a, b histogramKey) int {
		return cmp.Or(strings.Compare(a.what, b.what), strings.Compare(string(a.r), string(b.r)))
	})
	for i, k := range hs {
		name := "reqgate_gateway_" + k.what + "_seconds"
		if i == 0 || hs[i-1].what != k.what {
			metrics.WriteMetadataIfNeeded(w, name, "histogram")
		}
		h, _ := histograms.Load(k)
		h.(*striped.Histogram).Snapshot().WritePrometheus(w, name, `route="`+string(k.r)+`"`)
	}
}

// RequestsServed is the number of requests the gateways of the process have answered: the sum of
// reqgate_gateway_requests_total.
func RequestsServed() uint64 {
	var n uint64
	requestCounters.Range(func(_, c any) bool {
		n += c.(*striped.Counter).Load()
		return true
	})
	return n
}
