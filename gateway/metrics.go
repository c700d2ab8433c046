package gateway

import (
	"strconv"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

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

var (
	requestCounters sync.Map // requestLabels -> *metrics.Counter
	histograms      sync.Map // histogramKey -> *metrics.PrometheusHistogram
)

// metricsMemo is the request counter and histogram a connection's last request used. The requests of one
// connection are mostly alike (route, status, cache result), and the memo spares each the lookups by label,
// which hash the labels (a third of a hit's accounting).
type metricsMemo struct {
	labels  requestLabels
	counter *metrics.Counter
	request *metrics.PrometheusHistogram // reqgate_gateway_request_seconds{route=labels.route}
}

// observe counts a request that ended with code and took elapsed (upstream of it waiting for the upstream, 0 when
// it was not asked) in the request metrics. m may be nil (a connection the gateway did not accept).
func (m *metricsMemo) observe(r route.Class, code int, cache string, elapsed, upstream time.Duration) {
	if m == nil {
		m = new(metricsMemo)
	}
	if l := (requestLabels{r, code, cache}); m.counter == nil || m.labels != l {
		if m.request == nil || m.labels.route != r {
			m.request = histogram("request", r)
		}
		m.labels, m.counter = l, requestCounter(l)
	}
	m.counter.Inc()
	m.request.Update(elapsed.Seconds())
	if upstream > 0 {
		histogram("upstream", r).Update(upstream.Seconds())
	}
}

// requestCounter is reqgate_gateway_requests_total{route,code,cache}; the counters are looked up by a small
// struct so the hot path builds no strings.
func requestCounter(l requestLabels) *metrics.Counter {
	if c, ok := requestCounters.Load(l); ok {
		return c.(*metrics.Counter)
	}
	r, code, cache := l.route, l.code, l.cache
	if cache == "" {
		cache = "none"
	}
	name := `reqgate_gateway_requests_total{route="` + string(r) + `",code="` + strconv.Itoa(code) + `",cache="` + cache + `"}`
	c, _ := requestCounters.LoadOrStore(l, metrics.GetOrCreateCounter(name))
	return c.(*metrics.Counter)
}

type histogramKey struct {
	what string
	r    route.Class
}

// histogram returns reqgate_gateway_<what>_seconds{route} (Prometheus buckets, for histogram_quantile).
func histogram(what string, r route.Class) *metrics.PrometheusHistogram {
	key := histogramKey{what, r}
	if h, ok := histograms.Load(key); ok {
		return h.(*metrics.PrometheusHistogram)
	}
	h, _ := histograms.LoadOrStore(key,
		metrics.GetOrCreatePrometheusHistogram(`reqgate_gateway_`+what+`_seconds{route="`+string(r)+`"}`))
	return h.(*metrics.PrometheusHistogram)
}

// RequestsServed is the number of requests the gateways of the process have answered: the sum of
// reqgate_gateway_requests_total.
func RequestsServed() uint64 {
	var n uint64
	requestCounters.Range(func(_, c any) bool {
		n += c.(*metrics.Counter).Get()
		return true
	})
	return n
}
